// Python stacks of hung workers, taken before they are stopped: the one
// piece of evidence a hang leaves. Uses `py-spy dump --pid` when py-spy is on
// PATH (native frames too); otherwise the stack dumper every Python worker
// loads (python/primus_stacks/sitecustomize.py: faulthandler on
// StackSignal(), writing to the rank's stack file) is signalled and its
// file read after a short wait; a worker without it (not Python, or the
// dumper off) gets gdb's backtrace of every thread when gdb is on PATH; with
// none, it says plainly that no stack could be taken.
//
// On NCCL workers the collection also asks PyTorch's flight recorder for its
// dump: the agent writes to each rank's debug pipe (TORCH_NCCL_DEBUG_INFO_PIPE_FILE,
// which PyTorch >= 2.3 creates when the recorder is on; worker_env.h turns
// it on) and reads the rank's dump file once written (kFlightDumpWaitS).
//
// A StackCollection runs inside the agent's event loop, never blocking it:
// one dump process per worker, all started at once, their output read as it
// arrives, one deadline for the whole collection (a dump still running then
// is killed and its partial output kept). While it runs the agent goes on
// sending control-channel heartbeats, reading worker output and answering
// signals; a terminating signal abandons it at once (Abandon).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/deadline_timer.h"
#include "io/event_poller.h"
#include "io/unique_fd.h"

namespace primus::agent {

// Tags of the dump processes' pipes in the agent's epoll set:
// kFirstStackTag + index of the target.
inline constexpr uint64_t kFirstStackTag = uint64_t{1} << 40;

// How long one collection may take in all, whatever the number of workers.
inline constexpr double kStackCollectionTimeoutS = 10;
// How long a stop waits for the stack dumpers (Supervisor: a stop's stacks).
inline constexpr double kStopStacksTimeoutS = 2;

// The worker, or its first descendant, whose stack dumper is loaded (a shell
// wrapper's python child: it catches StackSignal()); 0 when none is.
pid_t DumperProcess(pid_t worker);

class StackCollection {
 public:
  struct Target {
    pid_t pid = 0;
    int rank = 0;
    std::string stack_file;  // the worker's stack dumper's file; "" when it has none
    std::string flight_pipe{};  // its flight recorder's debug pipe; "" when it has none
    std::string flight_dump{};  // the file the recorder dumps to when the pipe is written
  };
  // How long the flight recorders are given to dump, once their pipes are written.
  static constexpr double kFlightDumpWaitS = 3.0;
  // How long the dumpers are given to write, once signalled.
  static constexpr double kDumperWaitS = 1.0;
  struct Stacks {
    int rank = 0;
    std::string text;  // the tool's output (stdout and stderr), or why there is none
    bool complete = false;  // the tool exited on its own before the deadline
    std::string flight_dump;  // the flight recorder's dump (raw bytes); "" when none came
  };

  // Starts one dump per target. With no stack tool on PATH (or none could
  // start), the collection is done at once and no_tool() says why.
  StackCollection(std::vector<Target> targets, io::EventPoller& poller, double timeout_s = kStackCollectionTimeoutS,
                  const sigset_t* child_signal_mask = nullptr);
  ~StackCollection();  // kills and forgets dumps still running
  StackCollection(const StackCollection&) = delete;
  StackCollection& operator=(const StackCollection&) = delete;

  // Readable pipe of dump `tag - kFirstStackTag`.
  void OnEvent(uint64_t tag);
  SteadyTime deadline() const;
  // Past the deadline: kills the dumps still running; the collection is done.
  void OnDeadline(SteadyTime now);
  // Stops every dump now (a terminating signal must not wait behind them).
  void Abandon();
  bool done() const { return processes_running_ == 0 && !dumper_deadline_ && !flight_deadline_; }
  // Ranks whose flight recorder was asked for a dump.
  size_t flight_dumps_asked() const { return flight_files_.size(); }

  const std::optional<std::string>& no_tool() const { return no_tool_; }
  const std::vector<Stacks>& stacks() const { return stacks_; }
  double timeout_s() const { return timeout_s_; }

 private:
  struct Dump {
    pid_t pid = 0;
    io::UniqueFd pipe;
  };
  void Finish(size_t index, const char* note);
  // No py-spy: signal the workers' own dumpers; their files are read at the deadline.
  // (gdb for a worker without the dumper.)
  void SignalDumpers(const std::vector<Target>& targets);
  // Starts `argv` (py-spy, gdb) on `tool`, its output read into stacks_[index].
  void StartDumpProcess(size_t index, const std::string& tool, std::vector<std::string> argv);
  void ReadDumperFiles();
  // Writes the targets' flight recorder pipes; the dumps are read at flight_deadline_.
  void AskFlightRecorders(const std::vector<Target>& targets);
  void ReadFlightDumps();

  io::EventPoller& poller_;
  double timeout_s_;
  SteadyTime deadline_;
  std::vector<Dump> dumps_;
  std::vector<Stacks> stacks_;
  size_t processes_running_ = 0;  // py-spy or gdb processes whose output is still open
  const sigset_t* child_signal_mask_ = nullptr;
  std::optional<SteadyTime> dumper_deadline_;  // the signalled dumpers' files are read then
  std::optional<std::string> no_tool_;
  // The faulthandler way: each target's file and its size before the signal.
  std::vector<std::pair<std::string, off_t>> dumper_files_;
  // The flight recorder way: each asked target's dump file, and its
  // modification time before the ask (a dump from before is not this one).
  struct FlightFile {
    size_t index = 0;
    std::string path;
    int64_t mtime_ns_before = -1;  // -1: there was none
  };
  std::vector<FlightFile> flight_files_;
  std::optional<SteadyTime> flight_deadline_;
};

}  // namespace primus::agent
