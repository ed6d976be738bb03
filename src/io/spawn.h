// Starting a child process: the one place primus-cli asks the kernel for a
// new process running another program (helper commands through RunCommand,
// srun, ssh clients, container engines). Every child starts the same way,
// whatever state our own signal handling is in:
//   - an empty signal mask (or the one asked for): a mask we hold while a
//     SignalChannel reads our signals is never inherited;
//   - every signal at its default disposition, SIGPIPE included (we ignore
//     SIGPIPE to see EPIPE; a child must not inherit that), except those the
//     caller names as ignored (nohup's SIGHUP, which the user asked for);
//   - in a process group of its own (a timeout or a stop then ends it and
//     everything it started), or in ours when asked (srun, so that a
//     terminal's Ctrl-C reaches it as it reaches us);
//   - its standard descriptors mapped from ours (owned descriptors stay
//     close-on-exec, so nothing else leaks into it);
//   - a pidfd when the kernel has one (Linux 5.3+): waiting and signalling by
//     pidfd never hits a recycled pid.
// The node agent's workers have their own spawner (agent/process_spawner),
// a vfork-style clone that sets up a worker's session, death signal and
// NUMA placement before exec; it follows the same mask and disposition rule.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::io {

enum class ProcessGroup { kOwn, kCallers };

struct SpawnRequest {
  std::string executable;                  // a path (RunCommand resolves names on PATH first)
  std::vector<std::string> argv;           // argv[0] included
  std::vector<std::string> environment;    // NAME=VALUE, the whole environment
  std::string cwd{};                       // "" = ours
  ProcessGroup group = ProcessGroup::kOwn;
  std::vector<std::pair<int, int>> descriptors{};  // {ours, the child's}: dup2'd before exec
  std::vector<int> ignored_signals{};      // left ignored in the child (all others default)
  const sigset_t* signal_mask = nullptr;   // the child's mask; nullptr = empty
};

// A started child: its pid and, where the kernel has them, a pidfd.
struct SpawnedProcess {
  pid_t pid = -1;
  UniqueFd pidfd;  // invalid before Linux 5.3
};

// An EnvironmentError (exit 4) naming the program when it cannot start.
Result<SpawnedProcess> SpawnProcess(const SpawnRequest& request);

// Waits for `pid` to end, retrying EINTR; its status as a shell reports it:
// the exit code, or 128+N for a child killed by signal N.
int WaitForExit(pid_t pid);

// The status waitpid() gave, as a shell reports it (128+N for signal N).
int ShellStatus(int wait_status);

}  // namespace primus::io
