// Starting a child process: the one place primus-cli asks the kernel for a
// new process running another program: the node agent's workers, helper
// commands (RunCommand), srun, ssh clients, container engines, py-spy.
// Every child starts the same way, whatever state our own signal handling
// is in:
//   - the signal mask asked for (a SignalChannel's original_mask(), the one
//     the user gave us), or an empty one: the mask we hold while a channel
//     reads our signals is never inherited;
//   - every signal at its default disposition, SIGPIPE included (we may
//     ignore SIGPIPE to see EPIPE; a child must not inherit that), except
//     those the request keeps (nohup's SIGHUP, which the user asked for);
//   - in a process group of its own (a timeout or a stop then ends it and
//     everything it started), or in ours when asked (srun, so that a
//     terminal's Ctrl-C reaches it as it reaches us);
//   - its descriptors mapped from ours; of the others, only 0-2 that it does
//     not map are inherited, every other is closed at exec (torchrun's
//     close_fds);
//   - optionally a signal when the thread that started it dies
//     (PR_SET_PDEATHSIG), a CPU binding, a working directory;
//   - a pidfd when the kernel has one (Linux 5.3+): waiting and signalling
//     by pidfd never hits a recycled pid.
// The child is made with clone(CLONE_VM | CLONE_VFORK) on a small private
// stack, as posix_spawn does, so that the death signal and the CPU binding
// can be set between clone and exec (posix_spawn cannot): it does only
// system calls, and a failing step's errno comes back as an Error naming
// the step, with the child reaped.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::io {

// CPU numbers a SpawnRequest may bind to: 0..kMaxCpus-1.
inline constexpr int kMaxCpus = 8192;

enum class ProcessGroup { kOwn, kCallers };

// pidfd_open(2) where the kernel has it (Linux 5.3+); invalid otherwise.
// Signalling through it (SignalThroughPidfd) never reaches a recycled pid.
UniqueFd OpenPidfd(pid_t pid);
// pidfd_send_signal(2); false when it failed or the kernel has none.
bool SignalThroughPidfd(int pidfd, int signal);

struct SpawnRequest {
  std::string executable;                  // a path: no PATH search here (FindExecutable first)
  std::vector<std::string> argv;           // argv[0] as the user wrote it
  std::vector<std::string> environment;    // NAME=VALUE, the whole environment
  std::string cwd{};                       // "" = ours
  ProcessGroup group = ProcessGroup::kOwn;
  // {ours, the child's}: dup2'd in order; a source of 0-2 only as itself.
  std::vector<std::pair<int, int>> descriptors{};
  std::vector<int> kept_signals{};         // left as they are with us (ignored stays ignored)
  const sigset_t* signal_mask = nullptr;   // the child's mask; nullptr = empty
  int death_signal = 0;                    // sent to the child when the starting thread dies; 0 = none
  std::vector<int> cpus{};                 // sched_setaffinity before exec; empty = ours
};

// A started child: its pid and, where the kernel has them, a pidfd.
struct SpawnedProcess {
  pid_t pid = -1;
  UniqueFd pidfd;  // invalid before Linux 5.3
};

// An UnavailableError (exit 4) naming the program and the step that failed
// ("cannot start tool: execve: No such file or directory").
Result<SpawnedProcess> SpawnProcess(const SpawnRequest& request);

// Waits for `pid` to end, retrying EINTR; its status as a shell reports it:
// the exit code, or 128+N for a child killed by signal N (-1: not our child).
int WaitForExit(pid_t pid);

// The status waitpid() gave, as a shell reports it (128+N for signal N).
int ShellStatus(int wait_status);

}  // namespace primus::io
