// The "no orphans even if the agent is SIGKILLed" guarantee.
//
// Workers die with the agent through PR_SET_PDEATHSIG, but their children do
// not. So before starting any worker the agent forks this guard: a tiny
// process (in its own process group, so a group-wide kill of the agent spares
// it; without PDEATHSIG, so it outlives the agent) that blocks reading a pipe
// from the agent. The agent tells it each worker's process group as it
// starts. If the pipe reaches end-of-file without a "disarm" message — the
// agent died, however — the guard SIGKILLs those process groups, then every
// process whose environment carries this launch's unique token
// (PRIMUS_LAUNCH_TOKEN), repeating until none is left, and exits. It never
// touches a process without the token or outside the groups it was given.
// The guard uses only raw system calls after fork (no allocation).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::agent {

class OrphanGuard {
 public:
  // `token_entry` is the exact "PRIMUS_LAUNCH_TOKEN=<hex>" string workers carry.
  static Result<std::unique_ptr<OrphanGuard>> Start(std::string_view token_entry);
  // Disarms: the guard exits without killing anything, and is reaped.
  ~OrphanGuard();
  OrphanGuard(const OrphanGuard&) = delete;
  OrphanGuard& operator=(const OrphanGuard&) = delete;

  pid_t pid() const { return pid_; }
  void WatchGroup(pid_t process_group);
  // After an attempt is torn down: its group ids may be reused by others.
  void ForgetGroups();
  // The agent reaped the guard (it died): nothing to disarm or wait for.
  void MarkExited() { exited_ = true; }

 private:
  OrphanGuard() = default;
  void Send(int op, int value);

  io::UniqueFd channel_;
  pid_t pid_ = 0;
  bool exited_ = false;
};

// Kills (SIGKILL) every process but the caller whose /proc/<pid>/environ holds
// `token_entry` as a whole entry; returns how many. Async-signal-safe.
int KillProcessesCarrying(const char* token_entry, size_t token_length);

}  // namespace primus::agent
