#include "agent/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "agent/console_filter.h"
#include "agent/endings_log.h"
#include "agent/error_file.h"
#include "agent/failure_report.h"
#include "agent/printed_metrics.h"
#include "agent/process_tree.h"
#include "agent/stack_dump.h"
#include "analyze/hang_culprit.h"
#include "io/spawn.h"
#include "platform/visible_devices.h"
#include "util/clock.h"
#include "util/files.h"
#include "util/private_files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

constexpr int kPipeSize = 1 << 20;
// After SIGKILL a process normally vanishes in microseconds; one that does
// not within this long is stuck in the kernel and the agent stops waiting.
constexpr double kGiveUpAfterKillS = 10;
constexpr double kLeftoverWaitS = 5;
constexpr size_t kBannerTailLines = 20;

Status CreateEmptyFile(const std::string& path) {
  auto fd = CreatePrivateFile(path);
  if (!fd) return fd.error();
  ::close(*fd);
  return Status::Ok();
}

}  // namespace

struct Supervisor::Worker {
  size_t index = 0;
  int local_rank = 0;
  int rank = 0;
  pid_t pid = 0;
  bool running = false;
  int exit_code = 0;
  int signal = 0;
  double ended_at = 0;
  bool ended_after_stop = false;
  bool hung = false;
  double hung_at = 0;
  bool stuck_at_exit = false;  // silent past the exit grace after another worker exited 0
  std::string log_path;
  std::string error_file;
  std::string heartbeat_file;
  std::string metrics_file;
  std::string stack_file;  // its stack dumper's file (worker_env.h), "" when it has none
  std::string flight_dump;  // its NCCL flight recorder's dump file and debug pipe; "" when off
  std::string flight_pipe;
  std::unique_ptr<RankLog> log;
  // torchrun's <local rank>/stdout.log and stderr.log (spec.torchrun_log_files); null when not written.
  std::unique_ptr<RankLog> torchrun_stdout, torchrun_stderr;
  std::unique_ptr<PrintedMetrics> printed;  // progress read from its output; null when off (outlives out, err)
  std::unique_ptr<OutputStream> out;
  std::unique_ptr<OutputStream> err;
  io::UniqueFd pidfd;  // readable when the worker exits; absent on kernels < 5.3
};

Supervisor::Supervisor(const LaunchPlan& plan, const WorkerEnvironment& environment, LaunchHandles& handles,
                       int attempt, JobLink* link, telemetry::TelemetryHub* telemetry)
    : plan_(plan),
      environment_(environment),
      handles_(handles),
      attempt_(attempt),
      link_(link),
      attempt_dir_(AttemptDir(plan, attempt)),
      scratch_(new char[OutputStream::kReadSize]),
      hang_watch_(plan.spec.hang_timeout_s),
      exit_watch_(plan.spec.exit_grace_s),
      telemetry_(plan.spec.telemetry_interval_s > 0 ? telemetry : nullptr) {}

Supervisor::~Supervisor() = default;

std::vector<WorkerView> Supervisor::WorkerViews() const {
  std::vector<WorkerView> views;
  views.reserve(workers_.size());
  for (const auto& worker : workers_) views.push_back({worker->rank, worker->local_rank, worker->pid, worker->running});
  return views;
}

std::string Supervisor::AttemptDir(const LaunchPlan& plan, int attempt) {
  return JoinPath(plan.spec.log_dir, "attempt_" + std::to_string(attempt));
}

Result<AttemptResult> Supervisor::Run() {
  Status started = StartWorkers();
  if (!started) {
    if (AnyRunning()) {
      stop_signal_ = SIGKILL;
      phase_ = Phase::kStopping;
      KillEverything();
      Loop();
    }
    FinishAttempt();
    return started.error();
  }
  CheckJobStop();  // a stop may have come while the workers were starting
  if (telemetry_ != nullptr) TakeSample();  // the pids at once; rates from the next one
  Loop();
  if (telemetry_ != nullptr) TakeSample();  // how each worker ended, and its last metrics
  FinishAttempt();
  return Summarize();
}

Status Supervisor::StartWorkers() {
  if (Status status = MakePrivateDir(attempt_dir_); !status) return status;
  const LaunchSpec& spec = plan_.spec;
  if (spec.virtual_local_rank && environment_.VirtualDevice(spec.nproc_per_node - 1).empty()) {
    return ConfigError("direct.virtual_local_rank: " + std::to_string(spec.nproc_per_node) +
                           " workers, but CUDA_VISIBLE_DEVICES=" + environment_.SharedValue("CUDA_VISIBLE_DEVICES") +
                           " names fewer GPUs (torchrun refuses this too)",
                       "give one device per local rank in CUDA_VISIBLE_DEVICES, or fewer workers per node");
  }
  for (int local_rank = 0; local_rank < spec.nproc_per_node; ++local_rank) {
    auto worker = std::make_unique<Worker>();
    worker->index = workers_.size();
    worker->local_rank = local_rank;
    worker->rank = plan_.global_rank(local_rank);
    std::string base = JoinPath(attempt_dir_, plan_.host + ".rank" + std::to_string(worker->rank));
    worker->log_path = base + ".log";
    worker->error_file = base + ".error.json";
    if (spec.torchrun_log_files) {
      if (Status opened = OpenTorchrunFiles(*worker); !opened) return opened;
    }
    worker->heartbeat_file = base + ".heartbeat";
    worker->metrics_file = base + ".metrics.jsonl";

    // Stale files from an earlier run with this log directory would fake a
    // root cause, stacks or progress.
    ::unlink(worker->error_file.c_str());
    if (!environment_.user_metrics_file()) {
      // Created here, empty, so that the worker's appends keep our mode.
      ::unlink(worker->metrics_file.c_str());
      if (Status created = CreateEmptyFile(worker->metrics_file); !created) return created;
    }
    ::unlink((base + ".stacks.txt").c_str());
    std::string stack_file = base + ".pystacks.txt";
    ::unlink(stack_file.c_str());
    if (environment_.stack_dumper()) {
      // Ours, created empty: the worker appends to it (never through a planted link).
      if (Status created = CreateEmptyFile(stack_file); !created) return created;
      worker->stack_file = stack_file;
    }
    std::string flight_prefix = JoinPath(attempt_dir_, kFlightRecordPrefix);
    worker->flight_dump = environment_.FlightDumpFile(flight_prefix, worker->rank);
    worker->flight_pipe = environment_.FlightPipeFile(flight_prefix, worker->rank);
    if (worker->flight_dump.starts_with(flight_prefix)) ::unlink(worker->flight_dump.c_str());  // ours only
    ::unlink(worker->heartbeat_file.c_str());
    if (Status created = CreateEmptyFile(worker->heartbeat_file); !created) return created;
    auto log = RankLog::Open(worker->log_path);
    if (!log) return log.error();
    worker->log = std::make_unique<RankLog>(std::move(*log));
    workers_.push_back(std::move(worker));
  }
  for (auto& worker : workers_) {
    if (Status status = StartWorker(*worker); !status) return status;
  }
  return Status::Ok();
}

// torchrun's layout (DefaultLogsSpecs): attempt_<n>/<local rank>/ holds
// error.json, and stdout.log / stderr.log for the streams --redirects or
// --tee send to files.
Status Supervisor::OpenTorchrunFiles(Worker& worker) {
  const LaunchSpec& spec = plan_.spec;
  std::string dir = JoinPath(attempt_dir_, std::to_string(worker.local_rank));
  if (Status status = MakePrivateDir(dir); !status) return status;
  worker.error_file = JoinPath(dir, "error.json");
  ::unlink(worker.error_file.c_str());
  int to_files = spec.redirects.For(worker.local_rank) | spec.tee.For(worker.local_rank);
  for (auto [bit, name, target] : {std::tuple{kStdoutStream, "stdout.log", &worker.torchrun_stdout},
                                   std::tuple{kStderrStream, "stderr.log", &worker.torchrun_stderr}}) {
    if ((to_files & bit) == 0) continue;
    auto file = RankLog::Open(JoinPath(dir, name));
    if (!file) return file.error();
    *target = std::make_unique<RankLog>(std::move(*file));
  }
  return Status::Ok();
}

void Supervisor::FlushLogs(Worker& worker) {
  worker.log->Flush();
  if (worker.torchrun_stdout) worker.torchrun_stdout->Flush();
  if (worker.torchrun_stderr) worker.torchrun_stderr->Flush();
}

Status Supervisor::StartWorker(Worker& worker) {
  io::PipeEnds out, err;
  if (!io::MakePipe(&out) || !io::MakePipe(&err)) {
    return UnavailableError(std::string("cannot create worker pipes: ") + std::strerror(errno),
                            "the open-files limit may be too low (ulimit -n)");
  }
  // Bigger pipes: fewer wake-ups for the agent, fewer stalls for the worker.
  ::fcntl(out.write.get(), F_SETPIPE_SZ, kPipeSize);
  ::fcntl(err.write.get(), F_SETPIPE_SZ, kPipeSize);

  WorkerSlot slot{worker.local_rank, attempt_, worker.error_file, worker.heartbeat_file, worker.metrics_file,
                  worker.stack_file, JoinPath(attempt_dir_, kFlightRecordPrefix)};
  io::SpawnRequest request;
  request.executable = plan_.executable;
  request.argv = plan_.spec.argv;
  request.environment = environment_.For(slot);
  request.descriptors = {{handles_.dev_null(), 0}, {out.write.get(), 1}, {err.write.get(), 2}};
  request.signal_mask = &handles_.signals().original_mask();
  request.death_signal = SIGKILL;  // with the agent (and orphan_guard.h for what survives it)
  if (!plan_.spec.placements.empty()) request.cpus = plan_.spec.placements[static_cast<size_t>(worker.local_rank)].cpus;
  auto child = io::SpawnProcess(request);
  if (!child) return child.error();
  worker.pid = child->pid;
  worker.running = true;
  worker.pidfd = std::move(child->pidfd);
  if (worker.pidfd.valid()) {
    if (Status status = handles_.poller().Add(worker.pidfd.get(), kFirstPidTag + worker.index); !status) {
      worker.pidfd.Reset();
    }
  }
  handles_.guard().WatchGroup(worker.pid);
  hang_watch_.Track(worker.index, worker.heartbeat_file, SteadyClock::now());

  ConsoleSink& err_console = plan_.spec.stderr_to_stderr ? handles_.console_errors() : handles_.console();
  bool out_on_console =
      handles_.console().active() && OnConsole(plan_.spec, worker.rank, worker.local_rank, kStdoutStream);
  bool err_on_console = err_console.active() && OnConsole(plan_.spec, worker.rank, worker.local_rank, kStderrStream);
  PrefixFields fields{plan_.host, worker.rank, worker.local_rank, plan_.spec.node_rank, "out"};
  std::string out_prefix = out_on_console ? plan_.console_prefix.Render(fields) : "";
  fields.stream = "err";
  std::string err_prefix = err_on_console ? plan_.console_prefix.Render(fields) : "";

  worker.out = std::make_unique<OutputStream>(std::move(out.read), 'O', worker.log.get(),
                                              out_on_console ? &handles_.console() : nullptr, out_prefix);
  worker.err = std::make_unique<OutputStream>(std::move(err.read), 'E', worker.log.get(),
                                              err_on_console ? &err_console : nullptr, err_prefix);
  worker.out->set_raw_copy(worker.torchrun_stdout.get());
  worker.err->set_raw_copy(worker.torchrun_stderr.get());
  // Progress printed by the framework (Megatron's last rank, TorchTitan's
  // logger on either stream) becomes metrics lines, unless the user's own
  // PRIMUS_METRICS_FILE takes them.
  if (plan_.spec.progress_format != telemetry::ProgressFormat::kNone && !environment_.user_metrics_file()) {
    auto reader = telemetry::ProgressLineReader::Create(plan_.spec.progress_format, plan_.spec.progress_regex);
    if (!reader) return reader.error();
    worker.printed =
        std::make_unique<PrintedMetrics>(std::move(*reader), worker.metrics_file, attempt_, plan_.world_size());
    worker.out->set_printed_metrics(worker.printed.get());
    worker.err->set_printed_metrics(worker.printed.get());
  }
  for (OutputStream* stream : {worker.out.get(), worker.err.get()}) {
    if (Status status = handles_.poller().Add(stream->fd(), kFirstStreamTag + streams_.size()); !status) {
      return status;
    }
    streams_.push_back(stream);
  }
  return Status::Ok();
}

void Supervisor::Loop() {
  while (phase_ != Phase::kDone && AnyRunning()) {
    handles_.timer().ArmAt(NextDeadline());
    const std::vector<epoll_event>& events = handles_.poller().Wait(-1);
    for (const epoll_event& event : events) {
      uint64_t tag = event.data.u64;
      if (tag == kSignalTag) {
        HandleSignals();
      } else if (tag == kTimerTag) {
        handles_.timer().Acknowledge();
        HandleDeadline();
      } else if (tag >= kFirstMetricsTag) {
        handles_.OnMetricsEvent(tag);
      } else if (tag >= kFirstLinkTag) {
        if (link_ != nullptr) link_->OnEvent(tag);
      } else if (tag >= kFirstStackTag) {
        if (stacks_) stacks_->OnEvent(tag);
        if (phase_ == Phase::kCollectingStacks && stacks_ && stacks_->done()) FinishStackCollection();
        if (phase_ == Phase::kRunning && stacks_ && stacks_->done()) FinishStackCollection(/*then_stop=*/false);
      } else if (tag >= kFirstPidTag) {
        HandleWorkerPidfd(static_cast<size_t>(tag - kFirstPidTag));
      } else if (tag >= kFirstStreamTag) {
        HandleStream(static_cast<size_t>(tag - kFirstStreamTag));
      }
    }
    CheckJobStop();
    handles_.FlushConsoles();
  }
  handles_.timer().ArmAt(std::nullopt);
}

void Supervisor::CheckJobStop() {
  if (link_ == nullptr || phase_ != Phase::kRunning) return;
  std::optional<std::string> reason = link_->stop_reason();
  if (!reason) return;
  ending_ = AttemptResult::Ending::kStoppedByJob;
  job_stop_reason_ = *reason;
  if (link_->stop_takes_stacks()) {
    // The evidence of who the job waits for is in every node's stacks.
    log::Warn("stopping this node's workers: {}; taking their stacks first", *reason);
    stacks_for_remote_hang_ = true;
    CollectStacksThenStop();
    return;
  }
  log::Warn("stopping this node's workers: {}", *reason);
  BeginStop(SIGTERM);
}

void Supervisor::HandleSignals() {
  while (auto info = handles_.signals().Read()) {
    int signal = static_cast<int>(info->ssi_signo);
    switch (signal) {
      case SIGCHLD:
        handles_.ReapChildren([this](pid_t pid, int status) {
          if (Worker* worker = FindWorker(pid)) OnWorkerExit(*worker, status);
        });
        break;
      case SIGINT:
      case SIGTERM:
      case SIGHUP: OnAgentSignal(signal); break;
      case SIGUSR1:
      case SIGUSR2: ForwardSignal(signal); break;
      default:
        if (signal == StackSignal()) TakeStacksOnDemand();
        break;
    }
  }
}

void Supervisor::HandleStream(size_t stream_index) {
  if (stream_index >= streams_.size()) return;
  OutputStream* stream = streams_[stream_index];
  if (!stream->open()) return;
  Worker& worker = *workers_[stream_index / 2];
  switch (stream->ReadOnce(scratch_.get(), stamp_)) {
    case OutputStream::ReadStatus::kData:
      FlushLogs(worker);
      handles_.FlushConsolesIfLarge();
      if (hang_watch_.enabled() || exit_watch_.enabled()) {
        SteadyTime now = SteadyClock::now();
        hang_watch_.NoteOutput(worker.index, now);
        exit_watch_.NoteOutput(worker.index, now);
      }
      break;
    case OutputStream::ReadStatus::kEof:
      handles_.poller().Remove(stream->fd());
      stream->Finish(stamp_);
      FlushLogs(worker);
      break;
    case OutputStream::ReadStatus::kWouldBlock: break;
  }
}

void Supervisor::HandleWorkerPidfd(size_t worker_index) {
  if (worker_index >= workers_.size()) return;
  Worker& worker = *workers_[worker_index];
  if (!worker.running) return;
  int status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(worker.pid, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == worker.pid) OnWorkerExit(worker, status);
}

void Supervisor::HandleDeadline() {
  SteadyTime now = SteadyClock::now();
  if (next_sample_ && now >= *next_sample_) {
    TakeSample();
    now = SteadyClock::now();
  }
  if (link_ != nullptr) {
    std::optional<SteadyTime> due = link_->NextDeadline();
    if (due && *due <= now) link_->OnDeadline(now);
  }
  if (phase_ == Phase::kCollectingStacks) {
    if (stacks_) stacks_->OnDeadline(now);
    if (!stacks_ || stacks_->done()) FinishStackCollection();
    return;
  }
  if (phase_ == Phase::kRunning && stacks_) {  // taken on demand; the workers go on
    stacks_->OnDeadline(now);
    if (stacks_->done()) FinishStackCollection(/*then_stop=*/false);
  }
  if (phase_ == Phase::kStopping) {
    if (!killed_ && kill_deadline_ && now >= *kill_deadline_) {
      std::vector<int> ranks;
      for (auto& worker : workers_) {
        if (worker->running) ranks.push_back(worker->rank);
      }
      log::Warn("rank{} {} did not exit within {:g} s of {}; sending SIGKILL", ranks.size() > 1 ? "s" : "",
                JoinNumbers(ranks, ", "), plan_.spec.term_timeout_s, io::SignalName(stop_signal_));
      KillEverything();
    } else if (killed_ && give_up_deadline_ && now >= *give_up_deadline_) {
      for (auto& worker : workers_) {
        if (!worker->running) continue;
        log::Error("rank {} (pid {}) is still alive {:g} s after SIGKILL (stuck in the kernel?); no longer waiting for it",
                   worker->rank, worker->pid, kGiveUpAfterKillS);
        worker->running = false;
        worker->ended_after_stop = true;
        worker->signal = SIGKILL;
        worker->exit_code = 128 + SIGKILL;
        worker->ended_at = WallSeconds();
      }
      phase_ = Phase::kDone;
    }
    return;
  }
  if (phase_ == Phase::kRunning && hang_watch_.enabled()) {
    std::vector<size_t> hung = hang_watch_.CollectHung(now);
    if (!hung.empty()) {
      ReportHang(hung);
      return;
    }
  }
  if (phase_ == Phase::kRunning && first_finished_rank_ >= 0) {
    std::vector<size_t> stuck = exit_watch_.CollectHung(now);
    if (!stuck.empty()) ReportStuckAtExit(stuck);
  }
}

std::optional<SteadyTime> Supervisor::NextDeadline() const {
  std::optional<SteadyTime> next;
  if (phase_ == Phase::kStopping) next = killed_ ? give_up_deadline_ : kill_deadline_;
  if (phase_ == Phase::kCollectingStacks && stacks_) next = stacks_->deadline();
  if (phase_ == Phase::kRunning) {
    next = hang_watch_.NextDeadline();
    if (stacks_ && (!next || stacks_->deadline() < *next)) next = stacks_->deadline();
    if (first_finished_rank_ >= 0) {
      std::optional<SteadyTime> exit_due = exit_watch_.NextDeadline();
      if (exit_due && (!next || *exit_due < *next)) next = exit_due;
    }
  }
  if (link_ != nullptr) {
    std::optional<SteadyTime> link_due = link_->NextDeadline();
    if (link_due && (!next || *link_due < *next)) next = link_due;
  }
  if (next_sample_ && (!next || *next_sample_ < *next)) next = next_sample_;
  return next;
}

void Supervisor::TakeSample() {
  std::vector<telemetry::WorkerSource> sources;
  sources.reserve(workers_.size());
  for (const auto& worker : workers_) {
    sources.push_back({{worker->rank, worker->local_rank, static_cast<int>(worker->pid), worker->running},
                       environment_.user_metrics_file() ? "" : worker->metrics_file});
  }
  telemetry::NodeSample sample = telemetry_->SampleNode(sources);
  if (link_ != nullptr) link_->SendTelemetry(telemetry::ToJson(sample));
  telemetry_->Publish();
  next_sample_ = SteadyClock::now() + Seconds(plan_.spec.telemetry_interval_s);
}

void Supervisor::OnWorkerExit(Worker& worker, int status) {
  worker.running = false;
  if (worker.pidfd.valid()) {
    handles_.poller().Remove(worker.pidfd.get());
    worker.pidfd.Reset();
  }
  worker.ended_at = WallSeconds();
  if (WIFSIGNALED(status)) {
    worker.signal = WTERMSIG(status);
    worker.exit_code = 128 + worker.signal;
  } else {
    worker.exit_code = WEXITSTATUS(status);
  }
  hang_watch_.Untrack(worker.index);
  exit_watch_.Untrack(worker.index);
  if (phase_ == Phase::kCollectingStacks) return;  // ended on its own, before the stop; Summarize judges it
  if (phase_ != Phase::kRunning) {
    worker.ended_after_stop = true;
    return;
  }
  if (worker.exit_code == 0) {
    if (first_finished_rank_ < 0) StartExitGrace(worker);
    return;
  }
  ending_ = AttemptResult::Ending::kWorkerFailed;
  log::Error("rank {} (local rank {}, pid {}) failed with {}; stopping the other workers", worker.rank,
             worker.local_rank, worker.pid, DescribeEnding(worker.exit_code, worker.signal));
  BeginStop(SIGTERM);
  if (link_ != nullptr) link_->ReportLocalFailure(FailureOf(worker));
}

WorkerFailure Supervisor::FailureOf(const Worker& worker) const {
  WorkerFailure failure;
  failure.host = plan_.host;
  failure.rank = worker.rank;
  failure.local_rank = worker.local_rank;
  failure.pid = worker.pid;
  failure.attempt = attempt_;
  failure.exit_code = worker.exit_code;
  failure.signal = worker.signal;
  failure.hung = worker.hung;
  if (worker.hung) failure.hang_timeout_s = plan_.spec.hang_timeout_s;
  failure.timestamp = worker.hung ? worker.hung_at : worker.ended_at;
  failure.detected_at = failure.timestamp;
  failure.log_file = worker.log_path;
  if (link_ != nullptr) failure.log_tail = LastLines(worker.log_path, kBannerTailLines);
  if (std::optional<ErrorFileReport> report = ReadErrorFile(worker.error_file)) {
    failure.error_file = worker.error_file;
    failure.message = report->message;
    failure.traceback = report->traceback;
    if (report->timestamp) failure.timestamp = *report->timestamp;
  }
  return failure;
}

void Supervisor::OnAgentSignal(int signal) {
  if (phase_ == Phase::kRunning && !stacks_ && TakeStacksThenStop(signal)) return;
  if (phase_ == Phase::kCollectingStacks && stop_after_stacks_ != 0) {
    // A second stop while the first one's stacks are taken: as a second stop
    // would, it kills at once.
    log::Warn("received {} while taking the stacks for the stop: keeping what was collected and killing the workers "
              "now", io::SignalName(signal));
    if (stacks_) stacks_->Abandon();
    FinishStackCollection(/*then_stop=*/false);
    BeginStop(stop_after_stacks_);
    if (!killed_) KillEverything();
    return;
  }
  if (phase_ == Phase::kRunning || phase_ == Phase::kCollectingStacks) {
    if (phase_ == Phase::kCollectingStacks) {
      log::Warn("received {} while taking stacks: keeping what was collected and stopping now", io::SignalName(signal));
      if (stacks_) stacks_->Abandon();
      FinishStackCollection(/*then_stop=*/false);
    }
    agent_signal_ = signal;
    ending_ = AttemptResult::Ending::kAgentSignalled;
    if (plan_.spec.term_timeout_s > 0) {
      log::Warn("received {}: passing it to the workers, SIGKILL in {:g} s (send it again to kill at once)",
                io::SignalName(signal), plan_.spec.term_timeout_s);
    } else {
      log::Warn("received {}: killing the workers", io::SignalName(signal));
    }
    BeginStop(signal);
    if (link_ != nullptr && stop_after_stacks_ == 0) link_->ReportLocalSignal(signal);  // else reported already
    return;
  }
  if (phase_ != Phase::kStopping) return;
  // Stopping after a failure (here or on another node): the stop asked for
  // now still holds, so no restart follows it (node 0 reads it from this
  // node's outcome). A stop after the work was done changes nothing.
  using Ending = AttemptResult::Ending;
  bool restart_would_follow =
      ending_ == Ending::kWorkerFailed || ending_ == Ending::kHung || ending_ == Ending::kStoppedByJob;
  if (agent_signal_ == 0 && restart_would_follow) agent_signal_ = signal;
  if (!killed_) {
    log::Warn("received {} while stopping: killing the workers now", io::SignalName(signal));
    KillEverything();
  }
}

void Supervisor::ForwardSignal(int signal) {
  int forwarded = 0;
  for (auto& worker : workers_) {
    if (worker->running && ::kill(-worker->pid, signal) == 0) ++forwarded;
  }
  log::Info("forwarded {} to {} worker{}", io::SignalName(signal), forwarded, forwarded == 1 ? "" : "s");
}

void Supervisor::BeginStop(int signal) {
  phase_ = Phase::kStopping;
  stop_signal_ = signal;
  std::vector<pid_t> groups;
  for (auto& worker : workers_) {
    groups.push_back(worker->pid);
    if (worker->running) ::kill(-worker->pid, signal);
  }
  // Descendants that left the workers' groups (setsid) hear it too.
  pid_t guard = handles_.guard().pid();
  for (const ProcessInfo& process : ListDescendants(handles_.agent_pid())) {
    if (process.pid == guard) continue;
    if (std::find(groups.begin(), groups.end(), process.process_group) != groups.end()) continue;
    ::kill(process.pid, signal);
  }
  if (plan_.spec.term_timeout_s <= 0) {
    KillEverything();
  } else {
    kill_deadline_ = SteadyClock::now() + Seconds(plan_.spec.term_timeout_s);
  }
}

void Supervisor::KillEverything() {
  killed_ = true;
  for (auto& worker : workers_) {
    if (worker->pid > 0) ::kill(-worker->pid, SIGKILL);  // harmless when the group is gone
  }
  pid_t guard = handles_.guard().pid();
  for (const ProcessInfo& process : ListDescendants(handles_.agent_pid())) {
    if (process.pid != guard) ::kill(process.pid, SIGKILL);
  }
  give_up_deadline_ = SteadyClock::now() + Seconds(kGiveUpAfterKillS);
}

void Supervisor::ReportHang(const std::vector<size_t>& hung) {
  ending_ = AttemptResult::Ending::kHung;
  double now = WallSeconds();
  for (size_t index : hung) {
    Worker& worker = *workers_[index];
    worker.hung = true;
    worker.hung_at = now;
    log::Error("rank {} (local rank {}, pid {}) hung: no output and no touch of its heartbeat file for {:g} s",
               worker.rank, worker.local_rank, worker.pid, plan_.spec.hang_timeout_s);
    if (link_ != nullptr && index == hung.front()) link_->ReportLocalFailure(FailureOf(worker));
  }
  CollectStacksThenStop();
}

void Supervisor::StartExitGrace(const Worker& finished) {
  first_finished_rank_ = finished.rank;
  if (!exit_watch_.enabled()) return;
  SteadyTime now = SteadyClock::now();
  for (auto& worker : workers_) {
    if (worker->running) exit_watch_.Track(worker->index, worker->heartbeat_file, now);
  }
}

void Supervisor::ReportStuckAtExit(const std::vector<size_t>& stuck) {
  ending_ = AttemptResult::Ending::kStuckAtExit;
  std::vector<std::string> names;
  for (size_t index : stuck) {
    Worker& worker = *workers_[index];
    worker.stuck_at_exit = true;
    names.push_back(fmt::format("rank {} (local rank {}, pid {})", worker.rank, worker.local_rank, worker.pid));
  }
  log::Error("the work finished (rank {} exited 0), but {} stayed silent for {:g} s after that: stuck at exit, "
             "in teardown; taking stacks, then stopping {} (exit code {})",
             first_finished_rank_, Join(names, ", "), plan_.spec.exit_grace_s, stuck.size() == 1 ? "it" : "them",
             static_cast<int>(ExitCode::kStuckAtExit));
  CollectStacksThenStop();
}

std::vector<StackCollection::Target> Supervisor::StackTargets() const {
  std::vector<StackCollection::Target> targets;
  for (const auto& worker : workers_) {
    if (worker->running) {
      targets.push_back({worker->pid, worker->rank, worker->stack_file, worker->flight_pipe, worker->flight_dump});
    }
  }
  return targets;
}

void Supervisor::TakeStacksOnDemand() {
  if (phase_ != Phase::kRunning || stacks_) {
    log::Info("asked for stacks while {}: ignored", stacks_ ? "taking them already" : "stopping");
    return;
  }
  std::vector<StackCollection::Target> targets = StackTargets();
  log::Info("taking the stacks of {} worker{} (asked for by {}); they go on running", targets.size(),
            targets.size() == 1 ? "" : "s", io::SignalName(StackSignal()));
  stacks_ = std::make_unique<StackCollection>(std::move(targets), handles_.poller(), plan_.spec.stack_timeout_s,
                                              &handles_.signals().original_mask());
  if (stacks_->done()) FinishStackCollection(/*then_stop=*/false);
}

bool Supervisor::TakeStacksThenStop(int signal) {
  std::vector<StackCollection::Target> targets;
  for (StackCollection::Target& target : StackTargets()) {
    // Without the dumper loaded, py-spy or gdb would hold a stop up too long.
    if (target.stack_file.empty() || DumperProcess(target.pid) == 0) continue;
    target.flight_pipe.clear();               // nor the flight recorders' seconds
    targets.push_back(std::move(target));
  }
  if (targets.empty()) return false;
  agent_signal_ = signal;
  ending_ = AttemptResult::Ending::kAgentSignalled;
  stop_after_stacks_ = signal;
  log::Warn("received {}: taking the Python stacks of {} worker{} first, at most {:g} s (send it again to stop at "
            "once)", io::SignalName(signal), targets.size(), targets.size() == 1 ? "" : "s", kStopStacksTimeoutS);
  if (link_ != nullptr) link_->ReportLocalSignal(signal);
  stacks_ = std::make_unique<StackCollection>(std::move(targets), handles_.poller(), kStopStacksTimeoutS,
                                              &handles_.signals().original_mask());
  if (stacks_->done()) {
    FinishStackCollection();
  } else {
    phase_ = Phase::kCollectingStacks;
  }
  return true;
}

void Supervisor::CollectStacksThenStop() {
  // Stacks of every live worker: the hung one, and who waits for it.
  std::vector<StackCollection::Target> targets = StackTargets();
  stacks_ = std::make_unique<StackCollection>(std::move(targets), handles_.poller(), plan_.spec.stack_timeout_s,
                                              &handles_.signals().original_mask());
  if (stacks_->done()) {
    FinishStackCollection();
    return;
  }
  phase_ = Phase::kCollectingStacks;
}

// "# rank 2, local rank 2, pid 4242, last step 41, host node1": what
// `analyze hang` knows of the rank from its stacks file alone.
std::string Supervisor::StacksFileHeader(const Worker* worker) const {
  if (worker == nullptr) return "";
  std::string header = fmt::format("# rank {}, local rank {}, pid {}", worker->rank, worker->local_rank, worker->pid);
  if (worker->printed && worker->printed->last_step()) header += fmt::format(", last step {}", *worker->printed->last_step());
  return header + ", host " + plan_.host + "\n";
}

void Supervisor::FinishStackCollection(bool then_stop) {
  if (stacks_ && stacks_->no_tool()) {
    log::Warn("{}", *stacks_->no_tool());
  } else if (stacks_) {
    for (const StackCollection::Stacks& stacks : stacks_->stacks()) {
      const Worker* worker = nullptr;
      for (auto& candidate : workers_) {
        if (candidate->rank == stacks.rank) worker = candidate.get();
      }
      std::string path = JoinPath(attempt_dir_, plan_.host + ".rank" + std::to_string(stacks.rank) + ".stacks.txt");
      if (!WriteFileAtomic(path, StacksFileHeader(worker) + stacks.text).ok()) path = "(not saved)";
      if (worker != nullptr && worker->hung) {
        log::Error("stacks of hung rank {} (saved in {}):\n{}", stacks.rank, path, stacks.text);
      } else if (worker != nullptr && worker->stuck_at_exit) {
        log::Error("stacks of rank {}, stuck at exit (saved in {}):\n{}", stacks.rank, path, stacks.text);
      } else {
        log::Info("stacks of rank {} saved in {}", stacks.rank, path);
      }
    }
  }
  // A hang (a stuck exit has no one to wait for): which rank the others
  // wait for, when the stacks or flight records say (analyze/hang_culprit.h).
  bool local_hang = std::any_of(workers_.begin(), workers_.end(), [](const auto& worker) { return worker->hung; });
  if (stacks_ && (local_hang || stacks_for_remote_hang_)) JudgeHangHere(local_hang);
  stacks_.reset();
  if (phase_ == Phase::kCollectingStacks) phase_ = Phase::kRunning;
  if (!then_stop) return;
  int signal = stop_after_stacks_ != 0 ? stop_after_stacks_ : SIGTERM;
  if (stop_after_stacks_ != 0 && plan_.spec.term_timeout_s > 0) {
    log::Warn("passing {} to the workers, SIGKILL in {:g} s (send it again to kill at once)", io::SignalName(signal),
              plan_.spec.term_timeout_s);
  }
  BeginStop(signal);
}

void Supervisor::JudgeHangHere(bool local_hang) {
  std::vector<analyze::RankStacks> ranks;
  bool any_record = false;
  for (const StackCollection::Stacks& stacks : stacks_->stacks()) {
    analyze::RankStacks rank;
    rank.rank = stacks.rank;
    rank.host = plan_.host;
    rank.text = stacks_->no_tool() ? "" : stacks.text;
    for (const auto& worker : workers_) {
      if (worker->rank != stacks.rank) continue;
      rank.local_rank = worker->local_rank;
      if (plan_.spec.host) {
        rank.gpu = platform::GpuOfLocalRank(
            *plan_.spec.host,
            environment_.SharedValues({"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}),
            worker->local_rank);
      }
      if (worker->printed) rank.last_step = worker->printed->last_step();
    }
    if (!stacks.flight_dump.empty()) {
      auto record = analyze::ReadFlightRecord(stacks.flight_dump,
                                              "rank " + std::to_string(stacks.rank) + "'s flight recorder dump");
      if (record.ok()) rank.flight = std::move(*record);
      else log::Warn("{}", record.error().message);
      any_record = any_record || record.ok();
    }
    ranks.push_back(std::move(rank));
  }
  if (stacks_->no_tool() && !any_record) return;  // no evidence at all: said already
  analyze::HangVerdict verdict = analyze::JudgeHang(ranks);
  hang_places_ = verdict.places;
  if (!local_hang) return;  // node 0 judges the whole job from every node's places
  hang_verdict_ = verdict.summary;
  hang_details_ = verdict.details;
  hang_culprits_ = verdict.culprits;
  // The rank the others wait for is the hang's cause, though its own silence
  // may have started a moment after theirs: it counts as hung too.
  for (int culprit : verdict.culprits) {
    for (auto& worker : workers_) {
      if (worker->rank == culprit && worker->running && !worker->hung) {
        worker->hung = true;
        worker->hung_at = WallSeconds();
      }
    }
  }
  std::string verdict_path = JoinPath(attempt_dir_, plan_.host + ".hang_verdict.txt");
  (void)WriteFileAtomic(verdict_path, analyze::FormatVerdict(verdict));
  std::string details = verdict.details.empty() ? "" : "\n  " + Join(verdict.details, "\n  ");
  if (!verdict.culprits.empty()) {
    log::Error("hang: {} (from the {} of every rank of this node; {}){}", verdict.summary, verdict.evidence,
               verdict_path, details);
  } else {
    log::Warn("hang: {} ({})", verdict.summary, verdict_path);
  }
}

void Supervisor::FinishAttempt() {
  handles_.timer().ArmAt(std::nullopt);
  pid_t guard = handles_.guard().pid();
  auto leftovers = [&] {
    std::vector<ProcessInfo> found = ListDescendants(handles_.agent_pid());
    found.erase(std::remove_if(found.begin(), found.end(), [&](const ProcessInfo& p) { return p.pid == guard; }),
                found.end());
    return found;
  };
  std::vector<ProcessInfo> left = leftovers();
  if (!left.empty()) {
    if (phase_ == Phase::kRunning) {
      std::vector<int> pids;
      for (const ProcessInfo& process : left) pids.push_back(process.pid);
      log::Warn("killing {} process{} the workers left running: pid {}", left.size(),
                left.size() == 1 ? "" : "es", JoinNumbers(pids, ", "));
    }
    SteadyTime give_up = SteadyClock::now() + Seconds(kLeftoverWaitS);
    while (!left.empty() && SteadyClock::now() < give_up) {
      SignalAll(left, SIGKILL);
      // Wait for a SIGCHLD (re-parented leftovers die as our children).
      pollfd waiter{handles_.signals().fd(), POLLIN, 0};
      ::poll(&waiter, 1, 20);
      while (auto info = handles_.signals().Read()) {
        int signal = static_cast<int>(info->ssi_signo);
        if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) {
          log::Warn("received {} while cleaning up; finishing the clean-up", io::SignalName(signal));
        }
      }
      handles_.ReapChildren([](pid_t, int) {});
      left = leftovers();
    }
    if (!left.empty()) log::Error("{} leftover process(es) could not be killed", left.size());
  }
  handles_.ReapChildren([](pid_t, int) {});
  DrainStreams();
  handles_.FlushConsoles();
  handles_.guard().ForgetGroups();
  phase_ = Phase::kDone;
}

void Supervisor::DrainStreams() {
  for (size_t i = 0; i < streams_.size(); ++i) {
    OutputStream* stream = streams_[i];
    if (!stream->open()) continue;
    Worker& worker = *workers_[i / 2];
    while (stream->ReadOnce(scratch_.get(), stamp_) == OutputStream::ReadStatus::kData) {
      FlushLogs(worker);
      handles_.FlushConsolesIfLarge();
    }
    handles_.poller().Remove(stream->fd());
    stream->Finish(stamp_);
    FlushLogs(worker);
  }
}

AttemptResult Supervisor::Summarize() {
  AttemptResult result;
  result.hang_places = hang_places_;
  result.ending = ending_;
  result.agent_signal = agent_signal_;
  std::vector<WorkerFailure> failures;
  std::vector<int> stopped;
  std::vector<WorkerEnding> endings;
  for (auto& worker : workers_) {
    bool stopped_by_agent = false;
    if (worker->stuck_at_exit && worker->ended_after_stop) {
      // Its work was done: being stopped in teardown is not a failure.
      stopped_by_agent = true;
      result.stuck_at_exit.push_back(worker->rank);
    } else if (worker->exit_code == 0 && !worker->hung) {
      stopped_by_agent = worker->ended_after_stop;
    } else {
      std::optional<ErrorFileReport> report = ReadErrorFile(worker->error_file);
      bool killed_by_stop = worker->signal == stop_signal_ || worker->signal == SIGKILL;
      bool failed = !worker->ended_after_stop || worker->hung ||
                    (ending_ != AttemptResult::Ending::kAgentSignalled && (report.has_value() || !killed_by_stop));
      if (failed) failures.push_back(FailureOf(*worker));
      stopped_by_agent = !failed;
    }
    if (stopped_by_agent) stopped.push_back(worker->rank);
    if (worker->pid > 0) {  // a worker that never started has no ending to record
      WorkerEnding ending{worker->rank, worker->local_rank, worker->pid, worker->exit_code, worker->signal,
                          worker->hung, stopped_by_agent, worker->hung ? worker->hung_at : worker->ended_at,
                          plan_.spec.hang_timeout_s};
      ending.stuck_at_exit = worker->stuck_at_exit && worker->ended_after_stop;
      ending.exit_grace_s = plan_.spec.exit_grace_s;
      if (stopped_by_agent && !ending.stuck_at_exit) ending.stop_reason = job_stop_reason_;
      endings.push_back(ending);
    }
  }
  std::string endings_path = JoinPath(attempt_dir_, plan_.host + ".endings.log");
  if (Status written = WriteEndingsLog(endings_path, endings); !written) {
    log::Warn("{}", written.error().message);
  }
  if (!failures.empty()) {
    size_t root = ChooseRootCause(failures);
    result.root_cause = failures[root];
    failures.erase(failures.begin() + static_cast<long>(root));
    std::stable_sort(failures.begin(), failures.end(), FailedBefore);
    result.other_failures = std::move(failures);
    if (!hang_culprits_.empty()) PreferRankAsRootCause(hang_culprits_.front(), nullptr, &result.root_cause, &result.other_failures);
  }
  switch (ending_) {
    case AttemptResult::Ending::kSucceeded: result.exit_code = 0; break;
    case AttemptResult::Ending::kAgentSignalled: result.exit_code = 128 + agent_signal_; break;
    case AttemptResult::Ending::kStoppedByJob: result.exit_code = result.root_cause ? result.root_cause->exit_code : 0; break;
    case AttemptResult::Ending::kStuckAtExit:
      result.exit_code = result.root_cause ? result.root_cause->exit_code : static_cast<int>(ExitCode::kStuckAtExit);
      if (result.exit_code == 0) result.exit_code = 1;
      break;
    case AttemptResult::Ending::kWorkerFailed:
    case AttemptResult::Ending::kHung:
      result.exit_code = result.root_cause ? result.root_cause->exit_code : 1;
      if (result.exit_code == 0) result.exit_code = 1;
      break;
  }
  if (result.root_cause && link_ != nullptr) {
    log::Error("this node's workers failed (attempt {}): rank {} with {}{}; node 0 names the job's root cause",
               attempt_, result.root_cause->rank,
               result.root_cause->hung ? "a hang" : DescribeEnding(result.root_cause->exit_code, result.root_cause->signal),
               result.other_failures.empty() ? "" : fmt::format(" (and {} more)", result.other_failures.size()));
  } else if (result.root_cause) {
    BannerInput banner;
    banner.root_cause = *result.root_cause;
    banner.other_failures = result.other_failures;
    banner.stopped_ranks = stopped;
    banner.hang_timeout_s = plan_.spec.hang_timeout_s;
    banner.hang_verdict = hang_verdict_;
    banner.hang_details = hang_details_;
    log::Error("workers failed (attempt {}):\n{}", attempt_, FormatFailureBanner(banner));
  } else if (ending_ == AttemptResult::Ending::kAgentSignalled) {
    log::Warn("stopped all {} workers after {}", workers_.size(), io::SignalName(agent_signal_));
  } else if (!result.stuck_at_exit.empty()) {
    log::Error("finished (attempt {}): rank {} exited 0 and the work is done, but rank{} {} stuck at exit (teardown) "
               "and {} stopped after {:g} s of silence; stacks in {}; exit code {}. Raise --exit-grace if {} "
               "still had work to do.",
               attempt_, first_finished_rank_, result.stuck_at_exit.size() == 1 ? "" : "s",
               JoinNumbers(result.stuck_at_exit, ", "), result.stuck_at_exit.size() == 1 ? "was" : "were",
               plan_.spec.exit_grace_s, attempt_dir_, result.exit_code,
               result.stuck_at_exit.size() == 1 ? "it" : "they");
  }
  return result;
}

Supervisor::Worker* Supervisor::FindWorker(pid_t pid) {
  for (auto& worker : workers_) {
    if (worker->pid == pid && worker->running) return worker.get();
  }
  return nullptr;
}

bool Supervisor::AnyRunning() const {
  return std::any_of(workers_.begin(), workers_.end(), [](const auto& worker) { return worker->running; });
}

}  // namespace primus::agent
