// The agent's view of everything it started, however deep. The agent makes
// itself a child subreaper, so a worker's orphaned children (a data loader, a
// setsid'd daemon, a shell's background job) are re-parented to the agent
// rather than to init; walking /proc/<pid>/task/<tid>/children from the agent
// then finds every live descendant without scanning all of /proc.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::agent {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t process_group = 0;
};

// PR_SET_CHILD_SUBREAPER on the calling process; remembers the previous
// setting so that RestoreSubreaper puts it back.
Status BecomeSubreaper();
void RestoreSubreaper();

// Live descendants of `root` (not `root` itself), parents before children.
// Zombies are skipped: they are already dead and only need reaping.
std::vector<ProcessInfo> ListDescendants(pid_t root);

// The value of one line of /proc/<pid>/status ("PPid", "Uid", "SigCgt") as
// the kernel writes it after "<name>:", blanks trimmed ("1000\t1000\t1000\t1000");
// "" when the process or the line is not there.
std::string ProcessStatusValue(pid_t pid, std::string_view name);

// Whether `pid` is a primus-cli agent of this user: its executable is a
// primus-cli (this one, or one named so) and it runs as us. What `stacks`
// and `stop` check before they signal a job's agent.
bool IsOurAgent(pid_t pid);

// Sends `signal` to each of `processes`; returns how many were signalled.
int SignalAll(const std::vector<ProcessInfo>& processes, int signal);

}  // namespace primus::agent
