// Starts one worker process the fast way and the safe way at once.
//
// posix_spawn cannot set PR_SET_PDEATHSIG, and fork() copies the agent's page
// tables; so the child is created with clone(CLONE_VM | CLONE_VFORK) on a
// small private stack, does only raw system calls (setpgid, prctl, dup2,
// sched_setaffinity, sigprocmask, close_range, execve) and execs. The parent sleeps until the
// exec succeeded or failed; a failure's errno comes back through the shared
// memory and is returned as an Error naming the step, with the child reaped.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::agent {

// CPU numbers a SpawnRequest may bind to: 0..kMaxCpus-1.
inline constexpr int kMaxCpus = 8192;

struct SpawnRequest {
  std::string executable;               // a resolved path: no PATH search here
  std::vector<std::string> argv;        // argv[0] as the user wrote it
  std::vector<std::string> env;         // "K=V"
  int stdin_fd = -1;                    // dup2'd onto 0/1/2; -1 inherits the agent's
  int stdout_fd = -1;
  int stderr_fd = -1;
  const sigset_t* signal_mask = nullptr;  // the child's mask before exec; null = empty
  bool own_process_group = true;          // setpgid(0, 0): the child leads a new group
  bool die_with_parent = true;            // PR_SET_PDEATHSIG(SIGKILL)
  bool close_other_fds = true;            // like torchrun (subprocess close_fds)
  std::vector<int> cpus;                  // sched_setaffinity before exec; empty = the agent's own
};

// The child's pid, or an EnvironmentError ("cannot start <exe>: execve: ...",
// "...: sched_setaffinity: Invalid argument" when none of `cpus` is usable).
Result<pid_t> SpawnProcess(const SpawnRequest& request);

}  // namespace primus::agent
