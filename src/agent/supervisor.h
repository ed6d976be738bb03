// Runs one attempt of a launch: starts one worker per local rank, carries
// their output to the log files and the console, and ends the attempt when
// every worker has ended — all of them, always.
//
// Everything happens in one epoll loop: SIGCHLD and the agent's own signals
// arrive through the signalfd, output through the pipes, deadlines (SIGKILL
// after the grace, hang checks) through the timerfd. Each worker also has a
// pidfd in the set, so its exit is seen even if another thread of the
// process swallowed the SIGCHLD. The first worker that
// exits non-zero or by a signal (or hangs) stops the attempt: every other
// worker's process group gets SIGTERM (or the signal the agent received),
// SIGKILL after term_timeout, and the agent waits for each. Descendants that
// left their group (setsid daemons) are signalled alongside and SIGKILLed once
// the workers are gone; after a success, leftovers are SIGKILLed too.
//
// Two watches end workers that would otherwise be waited for forever: the
// hang watchdog (hang_timeout: silent while the others run) and the exit
// grace (exit_grace: silent after another worker already exited 0, i.e.
// stuck in teardown once the work is done). Either takes the stacks of every
// live worker first, in parallel and bounded (stack_dump.h), without
// stopping the event loop: heartbeats to the other nodes go on, and a
// terminating signal cuts the collection short. A stop (SIGINT, SIGTERM,
// SIGHUP to the agent: Ctrl-C, scancel, a time limit) first takes the
// Python stacks of the workers that load the stack dumper, within
// kStopStacksTimeoutS, then passes the signal on; a second signal stops at
// once.
//
// With telemetry on (a TelemetryHub, docs/monitor.md), one more deadline in
// the same loop samples the node every telemetry interval: local files only
// (procfs, sysfs, the workers' metrics files; NVML on NVIDIA hosts), and the
// sample goes to node 0 over the link. Off, the loop does no sampling work.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/launch_handles.h"
#include "agent/hang_watch.h"
#include "agent/job_link.h"
#include "agent/launch_plan.h"
#include "agent/launch_view.h"
#include "agent/line_stamp.h"
#include "agent/output_stream.h"
#include "agent/stack_dump.h"
#include "agent/worker_env.h"
#include "analyze/hang_culprit.h"
#include "telemetry/telemetry_hub.h"

namespace primus::agent {

struct AttemptResult {
  // kStoppedByJob: another node failed or was lost (multi-node; job_link.h).
  // kStuckAtExit: a worker exited 0, but others stayed past the exit grace
  // and were stopped; the work is done, so it is never restarted.
  enum class Ending { kSucceeded, kWorkerFailed, kHung, kAgentSignalled, kStoppedByJob, kStuckAtExit };
  Ending ending = Ending::kSucceeded;
  int exit_code = 0;
  int agent_signal = 0;
  std::optional<WorkerFailure> root_cause;
  std::vector<WorkerFailure> other_failures;
  std::vector<int> stuck_at_exit;  // ranks stopped after the exit grace (kStuckAtExit)
  std::vector<analyze::RankPlace> hang_places;  // after a hang here or elsewhere: where each rank was
};

class Supervisor {
 public:
  // `link`: the other nodes of a multi-node job, or null. With a link, the
  // first local failure is reported to it at once, its stop orders stop the
  // workers, and the banner is left to node 0 (which sees every node).
  // `telemetry`: where this node's samples go, or null (telemetry off).
  Supervisor(const LaunchPlan& plan, const WorkerEnvironment& environment, LaunchHandles& handles,
             int attempt, JobLink* link = nullptr, telemetry::TelemetryHub* telemetry = nullptr);
  ~Supervisor();

  // An Error only when the workers could not be started (log files, exec);
  // any worker already started is stopped and reaped first.
  Result<AttemptResult> Run();

  // This attempt's workers as the metrics port shows them (launch_view.h).
  std::vector<WorkerView> WorkerViews() const;

  // "<log_dir>/attempt_<n>"
  static std::string AttemptDir(const LaunchPlan& plan, int attempt);

 private:
  struct Worker;
  // kCollectingStacks: after a hang or a stuck exit, before the stop; the
  // workers still run and nothing else is decided until the stacks are in.
  enum class Phase { kRunning, kCollectingStacks, kStopping, kDone };

  Status StartWorkers();
  Status StartWorker(Worker& worker);
  Status OpenTorchrunFiles(Worker& worker);
  // The worker's log and its torchrun files, when written.
  void FlushLogs(Worker& worker);
  void Loop();
  void HandleSignals();
  void HandleStream(size_t stream_index);
  void HandleWorkerPidfd(size_t worker_index);
  void HandleDeadline();
  void OnWorkerExit(Worker& worker, int status);
  void CheckJobStop();
  WorkerFailure FailureOf(const Worker& worker) const;
  void OnAgentSignal(int signal);
  void ForwardSignal(int signal);
  void BeginStop(int signal);
  void KillEverything();
  void ReportHang(const std::vector<size_t>& hung);
  void ReportStuckAtExit(const std::vector<size_t>& stuck);
  void StartExitGrace(const Worker& finished);
  void CollectStacksThenStop();
  // StackSignal() to the agent: every worker's stacks (and flight records)
  // saved in the attempt directory, the workers left running.
  void TakeStacksOnDemand();
  // What a stack collection takes: every live worker, with its dumper's and flight recorder's files.
  std::vector<StackCollection::Target> StackTargets() const;
  // On a stop: the Python stacks of every live worker that loads the dumper,
  // then the stop with `signal`. False when no worker has the dumper.
  bool TakeStacksThenStop(int signal);
  std::string StacksFileHeader(const Worker* worker) const;
  // Writes the stacks files and logs them; then (then_stop) stops the workers.
  void FinishStackCollection(bool then_stop = true);
  // From the stacks and flight records just collected: this node's ranks'
  // places (sent to node 0), and after a hang here, the node's verdict.
  void JudgeHangHere(bool local_hang);
  void FinishAttempt();
  void DrainStreams();
  std::optional<SteadyTime> NextDeadline() const;
  // Samples this node, sends the sample to node 0 (a member) and publishes the view.
  void TakeSample();
  AttemptResult Summarize();
  Worker* FindWorker(pid_t pid);
  bool AnyRunning() const;

  const LaunchPlan& plan_;
  const WorkerEnvironment& environment_;
  LaunchHandles& handles_;
  int attempt_;
  JobLink* link_;
  std::string attempt_dir_;
  std::string hang_verdict_;  // what the stacks said of a hang (analyze/hang_culprit.h); "" when none
  std::vector<std::string> hang_details_;
  std::vector<int> hang_culprits_;  // the ranks the hang's verdict names
  std::vector<analyze::RankPlace> hang_places_;  // each rank's place in that hang, for node 0's judgement
  bool stacks_for_remote_hang_ = false;  // node 0 stopped the job for a hang elsewhere: stacks first
  int stop_after_stacks_ = 0;  // the agent's signal that waits for the stacks being taken (TakeStacksThenStop)
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<OutputStream*> streams_;  // index = tag - kFirstStreamTag
  std::unique_ptr<char[]> scratch_;
  LineStamp stamp_;
  HangWatch hang_watch_;
  HangWatch exit_watch_;  // armed when the first worker exits 0
  int first_finished_rank_ = -1;
  std::unique_ptr<StackCollection> stacks_;

  Phase phase_ = Phase::kRunning;
  AttemptResult::Ending ending_ = AttemptResult::Ending::kSucceeded;
  int stop_signal_ = 0;
  std::string job_stop_reason_;  // the job link's reason, when it stopped this node's workers
  int agent_signal_ = 0;
  std::optional<SteadyTime> kill_deadline_;
  std::optional<SteadyTime> give_up_deadline_;
  bool killed_ = false;
  telemetry::TelemetryHub* telemetry_;
  std::optional<SteadyTime> next_sample_;
};

}  // namespace primus::agent
