#include "job/run_workers.h"

#include <algorithm>
#include <cmath>

#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "agent/endings_log.h"
#include "agent/launch_handles.h"
#include "io/message_socket.h"
#include "job/etcd_rendezvous.h"
#include "job/open_link.h"
#include "agent/launch_plan.h"
#include "agent/launch_view.h"
#include "agent/metrics_server.h"
#include "io/tcp_port.h"
#include "io/signal_channel.h"
#include "agent/supervisor.h"
#include "agent/worker_env.h"
#include "platform/host_detect.h"
#include "snapshot/redaction.h"
#include "telemetry/node_sampler.h"
#include "telemetry/prometheus_text.h"
#include "util/clock.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

extern char** environ;

namespace primus::job {

using agent::AttemptResult;
using agent::GenerationLayout;
using agent::JobDecision;
using agent::LaunchHandles;
using agent::LaunchPlan;
using agent::LaunchSpec;
using agent::LaunchView;
using agent::LaunchViewJson;
using agent::MetricsProviders;
using agent::MetricsServer;
using agent::NodeOutcome;
using agent::PlanLaunch;
using agent::RunResult;
using agent::Seconds;
using agent::SteadyClock;
using agent::SteadyTime;
using agent::Supervisor;
using agent::WorkerEnvironment;
using agent::WorkerFailure;
using agent::kEtcdRendezvous;
using agent::kJobTokenVariable;
using agent::kLaunchTokenVariable;
using agent::kStaticRendezvous;

namespace {



double BackoffSeconds(const LaunchSpec& spec, int restart_index) {
  double backoff = spec.restart_backoff_s * std::pow(2.0, std::min(restart_index, 30));
  return std::min(backoff, spec.max_restart_backoff_s);
}

// `elastic`: generations follow membership, not only failures.
void LogStart(const LaunchPlan& plan, int attempt, bool elastic = false) {
  const LaunchSpec& spec = plan.spec;
  int first = plan.global_rank(0);
  int last = plan.global_rank(spec.nproc_per_node - 1);
  std::string ranks = first == last ? "rank " + std::to_string(first)
                                    : "ranks " + std::to_string(first) + "-" + std::to_string(last);
  log::Info("{} {} worker{} ({} of world size {}): {}; master {}:{}; logs in {}",
            attempt == 0 ? "starting"
            : elastic    ? fmt::format("generation {}: starting", attempt)
                         : fmt::format("restart {}/{}: starting", attempt, spec.max_restarts),
            spec.nproc_per_node, spec.nproc_per_node == 1 ? "" : "s", ranks, plan.world_size(),
            ShellJoin(spec.argv), spec.master_addr, spec.master_port,
            Supervisor::AttemptDir(plan, attempt));
}

}  // namespace

std::unique_ptr<telemetry::TelemetryHub> MakeTelemetryHub(const LaunchPlan& plan, const WorkerEnvironment& workers) {
  const LaunchSpec& spec = plan.spec;
  if (!(spec.telemetry_interval_s > 0)) return nullptr;
  platform::Roots roots = platform::Roots::FromEnvironment();
  std::shared_ptr<const platform::HostInfo> host = spec.host;
  if (!host) host = std::make_shared<const platform::HostInfo>(platform::DetectHost(roots));
  telemetry::NodeSamplerSettings sampler;
  sampler.roots = roots;
  sampler.gpus = host->gpus;
  sampler.interface = telemetry::JobInterface(*host, spec.master_addr, spec.nnodes == 1,
                                              workers.SharedValue("NCCL_SOCKET_IFNAME"),
                                              workers.SharedValue("GLOO_SOCKET_IFNAME"));
  telemetry::TelemetrySettings settings;
  settings.log_dir = spec.log_dir;
  settings.interval_s = spec.telemetry_interval_s;
  settings.run_id = spec.run_id;
  settings.experiment = spec.experiment_name;
  settings.cwd = CurrentDir();
  std::string command = snapshot::ProcessRedactor().Text(ShellJoin(spec.argv));
  settings.command = command.size() > 200 ? command.substr(0, 197) + "..." : command;
  if (spec.tensorboard) {
    settings.tensorboard_dir = spec.tensorboard_dir.empty() ? JoinPath(spec.log_dir, "tensorboard") : spec.tensorboard_dir;
  }
  settings.backend = spec.backend;
  if (spec.progress_format != telemetry::ProgressFormat::kAuto && spec.progress_format != telemetry::ProgressFormat::kNone) {
    settings.framework = std::string(telemetry::ProgressFormatName(spec.progress_format));
  }
  settings.host = plan.host;
  settings.node_rank = spec.node_rank;
  settings.nnodes = spec.nnodes;
  settings.world_size = plan.world_size();
  settings.writes_files = spec.nnodes == 1;
  return std::make_unique<telemetry::TelemetryHub>(settings,
                                                   std::make_unique<telemetry::NodeSampler>(std::move(sampler)));
}

namespace {

// What the metrics port shows of this launch: RunWorkers keeps the launch's
// state here and points `supervisor` at the attempt that runs.
struct LiveLaunch {
  LaunchView view;
  const Supervisor* supervisor = nullptr;

  void Start(const Supervisor& running, int generation) {
    supervisor = &running;
    view.state = "running";
    view.generation = generation;
  }
  // The attempt ended: its workers stay in the view, as exited.
  void End(const Supervisor& ended) {
    view.workers = ended.WorkerViews();
    supervisor = nullptr;
  }
};

// The view the metrics port serves at each request: node 0's is the job's,
// another node's its own (docs/monitor.md). Both are built from what the agent
// knows of its launch (launch_view.h).
nlohmann::json CurrentView(const LiveLaunch& live) {
  LaunchView view = live.view;
  if (live.supervisor != nullptr) view.workers = live.supervisor->WorkerViews();
  return LaunchViewJson(view);
}

// --metrics-port: opened once per launch, before the nodes join, and kept
// until the agent returns; every wait of the launch answers on it. With
// telemetry on, the hub's views are served (node 0: the job's, another node:
// its own); with --telemetry-interval 0, what the agent knows of its launch.
Status ServeMetrics(const LaunchPlan& plan, LaunchHandles& handles, const std::shared_ptr<LiveLaunch>& live,
                    const telemetry::TelemetryHub* hub) {
  if (plan.spec.metrics_port == 0) return Status::Ok();
  auto view = [live, hub]() -> nlohmann::json {
    if (hub == nullptr) return CurrentView(*live);
    nlohmann::json job = hub->JobView();
    return job.is_object() && !job.empty() ? job : CurrentView(*live);
  };
  MetricsProviders providers;
  providers.metrics = [view] { return telemetry::RenderPrometheusText(view()); };
  providers.job_json = [view] { return view().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  auto server = MetricsServer::Open(plan.spec.metrics_port, handles.poller(), std::move(providers));
  if (!server) return server.error();
  log::Info("metrics: http://{}:{}/metrics and /job.json", plan.host, (*server)->port());
  handles.ServeMetrics(std::move(*server));
  return Status::Ok();
}

JobLinkSettings LinkSettings(const LaunchPlan& plan) {
  const LaunchSpec& spec = plan.spec;
  JobLinkSettings settings;
  settings.self.node_rank = spec.node_rank;
  settings.self.nnodes = spec.nnodes;
  settings.self.min_nnodes = spec.min_nnodes;
  settings.self.rendezvous = spec.rendezvous;
  settings.self.nproc_per_node = spec.nproc_per_node;
  settings.self.version = PRIMUS_VERSION;
  settings.self.host = plan.host;
  settings.self.pid = static_cast<int>(getpid());
  const char* token = std::getenv(kJobTokenVariable);
  settings.token = token != nullptr ? token : "";
  settings.master_addr = spec.master_addr;
  bool assigned = spec.rendezvous != kStaticRendezvous;
  settings.control_port = spec.control_port != 0 || assigned ? spec.control_port : spec.master_port + 1;
  settings.master_port = spec.master_port;
  settings.run_id = spec.run_id;
  settings.last_call_timeout_s = spec.last_call_timeout_s;
  settings.join_timeout_s = spec.join_timeout_s;
  settings.exit_barrier_timeout_s = spec.exit_barrier_timeout_s;
  settings.heartbeat_interval_s = spec.heartbeat_interval_s;
  settings.heartbeat_timeout_s = spec.heartbeat_timeout_s;
  settings.term_timeout_s = spec.term_timeout_s;
  settings.max_restarts = spec.max_restarts;
  settings.exclude_bad_nodes = spec.exclude_bad_nodes;
  settings.spare_nodes = spec.spare_nodes;
  settings.restarts_before = spec.restarts_before;
  settings.restart_backoff_s = spec.restart_backoff_s;
  settings.max_restart_backoff_s = spec.max_restart_backoff_s;
  return settings;
}

// The etcd-v2 rendezvous: etcd names the coordinator (the first agent to
// claim the run id) and where its control channel listens. A published
// coordinator that refuses connections is dead: its claim is withdrawn and
// the election runs again.
class EtcdRendezvous {
 public:
  explicit EtcdRendezvous(const LaunchPlan& plan) : plan_(plan) { etcd_.endpoint = plan.spec.rdzv_endpoint; }
  ~EtcdRendezvous() {
    if (point_.coordinator) {
      if (Status released = ReleaseCoordinator(etcd_, plan_.spec.run_id, point_, 5); !released) {
        log::Warn("etcd: could not withdraw this node's claim to coordinate {}: {}", plan_.spec.run_id,
                  released.error().message);
      }
    }
  }

  // Fills in who coordinates and where; the coordinator refreshes its claim.
  Status Elect(JobLinkSettings* settings) {
    std::string self_host = plan_.spec.local_addr;
    if (self_host.empty()) {
      char name[256] = {};
      ::gethostname(name, sizeof(name) - 1);
      self_host = name;
    }
    int port = plan_.spec.control_port;
    if (port == 0) {
      auto free_port = io::PickFreePort();
      if (!free_port) return free_port.error();
      port = *free_port;
    }
    SteadyTime deadline = SteadyClock::now() + Seconds(plan_.spec.join_timeout_s);
    while (true) {
      double left = std::chrono::duration<double>(deadline - SteadyClock::now()).count();
      // The fence's coordinator still runs the job only if it proves itself with our token.
      std::string token = settings->token;
      auto point = ElectCoordinator(etcd_, plan_.spec.run_id, self_host, port, std::max(left, 1.0),
                                    [token](const std::string& host, int port) {
                                      return CoordinatorProvesItself(host, port, token);
                                    });
      if (!point) return point.error();
      if (point->coordinator || CoordinatorAnswers(point->host, point->port)) {
        point_ = *point;
        break;
      }
      log::Warn("etcd: the coordinator published at {}:{} refuses connections; electing again", point->host,
                point->port);
      (void)ReleaseCoordinator(etcd_, plan_.spec.run_id, *point, 5);
      if (SteadyClock::now() >= deadline) {
        return UnavailableError("etcd rendezvous: no live coordinator for " + plan_.spec.run_id + " within the join "
                                "timeout", "check the other nodes' logs");
      }
    }
    if (point_.fenced) {
      log::Warn("etcd: {}'s coordinator key had expired (an etcd outage?), but its coordinator at {}:{} still runs the "
                "job: joining it instead of coordinating a second time",
                plan_.spec.run_id, point_.host, point_.port);
    }
    log::Info("etcd rendezvous at {} for {}: {}", etcd_.endpoint, plan_.spec.run_id,
              point_.coordinator ? fmt::format("this node coordinates, on {}:{}", point_.host, point_.port)
                                 : fmt::format("the coordinator is {}:{}", point_.host, point_.port));
    settings->coordinates = point_.coordinator;
    settings->master_addr = point_.host;
    settings->control_port = point_.port;
    if (point_.coordinator) {
      settings->keep_alive_interval_s = etcd_.RefreshInterval();
      settings->keep_alive = [this] {
        auto refreshed = RefreshCoordinator(etcd_, plan_.spec.run_id, point_, 2);
        if (!refreshed) {
          log::Warn("etcd: could not refresh this node's claim to coordinate (late joiners may not find it): {}",
                    refreshed.error().message);
        } else if (*refreshed == Refreshed::kReclaimed) {
          log::Warn("etcd: this node's claim to coordinate {} had expired (etcd was out of reach longer than its "
                    "TTL); claimed it again", plan_.spec.run_id);
        }
      };
    }
    return Status::Ok();
  }

 private:
  const LaunchPlan& plan_;
  EtcdSettings etcd_;
  RendezvousPoint point_;
};

// One node of a multi-node job: the generations are the job's, decided by node 0.
// direct.exclude_bad_nodes, after node 0's decision: a host left out is
// recorded (node 0: failing_nodes.txt in the log directory; the excluded
// node: its endings log) and, on that host, ends this agent with exit code 5.
// A worker's own exit code 5 is reported as 1 under the policy, so that 5
// always means an excluded node to the launcher above. True when this node
// was the one excluded.
bool RecordExclusion(const LaunchPlan& plan, const LaunchPlan& generation_plan, int generation,
                     const JobDecision& decision, bool coordinates, RunResult* result) {
  const std::vector<std::string>& excluded = decision.excluded_hosts;
  if (!excluded.empty()) {
    result->excluded_hosts = excluded;
    result->exclusion_reason = decision.exclusion_reason;
  }
  if (coordinates && !excluded.empty()) {
    std::string path = JoinPath(plan.spec.log_dir, "failing_nodes.txt");
    auto before = ReadRegularFile(path, 1 << 20);
    std::string text = before.ok() ? *before : "";
    std::vector<std::string> listed = Split(text, '\n');
    for (const std::string& host : excluded) {
      if (std::find(listed.begin(), listed.end(), host) == listed.end()) text += host + "\n";
    }
    if (Status written = WriteFileAtomic(path, text); !written) log::Warn("{}", written.error().message);
  }
  bool self = std::find(excluded.begin(), excluded.end(), plan.host) != excluded.end();
  if (self) {
    log::Error("this node ({}) is excluded from the job: {}; exit code {}", plan.host, decision.exclusion_reason,
               static_cast<int>(ExitCode::kNodeExcluded));
    std::string endings = JoinPath(Supervisor::AttemptDir(generation_plan, generation), plan.host + ".endings.log");
    if (Status noted = agent::AppendNodeExclusion(endings, plan.host, decision.exclusion_reason, WallSeconds()); !noted) {
      log::Warn("{}", noted.error().message);
    }
    result->exit_code = static_cast<int>(ExitCode::kNodeExcluded);
  } else if (plan.spec.exclude_bad_nodes && !decision.restart &&
             result->exit_code == static_cast<int>(ExitCode::kNodeExcluded)) {
    log::Warn("the root cause's exit code 5 is reported as 1: with direct.exclude_bad_nodes, exit code 5 means a "
              "node excluded from the job");
    result->exit_code = 1;
  }
  return self;
}

Result<RunResult> RunJobNode(const LaunchPlan& plan, LaunchHandles& handles, telemetry::TelemetryHub* telemetry,
                             RunResult result, LiveLaunch& live) {
  JobLinkSettings settings = LinkSettings(plan);
  if (telemetry != nullptr) {
    settings.on_telemetry = [telemetry](const nlohmann::json& sample) { telemetry->AddNodeSample(sample); };
  }
  std::optional<EtcdRendezvous> etcd;
  if (plan.spec.rendezvous == kEtcdRendezvous) {
    etcd.emplace(plan);
    if (Status elected = etcd->Elect(&settings); !elected) return elected.error();
  }
  if (settings.token.empty()) {
    log::Warn("{} is not set: the control channel on port {} is unauthenticated (any program that reaches it can "
              "join this job or pose as node 0); set the same secret value on every node (the slurm, ssh and k8s "
              "modes do it for you)",
              kJobTokenVariable, settings.control_port);
  }
  if (!settings.token.empty() && settings.token.size() < 16) {
    log::Warn("{} is {} characters: a short or guessable secret can be found from what the control channel's "
              "handshake sends; use 16 or more random characters (openssl rand -hex 16)",
              kJobTokenVariable, settings.token.size());
  }
  auto link = OpenJobLink(settings, handles);
  if (!link) return link.error();
  if (telemetry != nullptr) {
    telemetry->SetWritesFiles((*link)->coordinates());
    telemetry->Publish();  // node 0: "starting", while the nodes join
  }
  auto joined = (*link)->Join();
  if (!joined) return joined.error();
  if (*joined != 0) {
    log::Warn("received {} while waiting for the other nodes: not starting", io::SignalName(*joined));
    result.agent_signal = *joined;
    result.exit_code = 128 + *joined;
    return result;
  }
  while (true) {
    int generation = (*link)->generation();
    // This generation's place of the node: the same every time with fixed
    // node ranks; renumbered in an elastic job.
    GenerationLayout layout = (*link)->layout();
    LaunchPlan generation_plan = plan;
    generation_plan.spec.node_rank = layout.node_rank;
    generation_plan.spec.nnodes = layout.nnodes;
    generation_plan.spec.master_addr = layout.master_addr;
    generation_plan.spec.master_port = layout.master_port;
    // A run id nobody gave differs from node to node: the workers get the coordinator's.
    if (!layout.run_id.empty()) generation_plan.spec.run_id = layout.run_id;
    generation_plan.node_hosts = layout.node_hosts;
    WorkerEnvironment generation_environment(generation_plan, environ);
    LogStart(generation_plan, generation, plan.spec.rendezvous != kStaticRendezvous);
    if (telemetry != nullptr) {
      telemetry->BeginGeneration(generation, layout.node_rank, layout.nnodes, generation_plan.world_size(),
                                 result.restarts + plan.spec.restarts_before);
      telemetry->SetState(telemetry::JobState::kRunning);
    }
    Supervisor supervisor(generation_plan, generation_environment, handles, generation, link->get(), telemetry);
    live.view.node_rank = layout.node_rank;
    live.view.nnodes = layout.nnodes;
    live.view.world_size = generation_plan.world_size();
    live.view.run_id = generation_plan.spec.run_id;
    live.Start(supervisor, generation);
    auto attempt = supervisor.Run();
    live.End(supervisor);
    NodeOutcome outcome;
    if (!attempt) {
      // This node cannot start its workers: the others must not wait for it.
      log::Error("{}", attempt.error().Format());
      WorkerFailure failure;
      failure.host = plan.host;
      failure.rank = generation_plan.global_rank(0);
      failure.attempt = generation;
      failure.exit_code = static_cast<int>(attempt.error().code);
      failure.message = attempt.error().message;
      (*link)->ReportLocalFailure(failure);
      outcome.exit_code = failure.exit_code;
      outcome.root_cause = failure;
    } else {
      outcome.exit_code = attempt->exit_code;
      outcome.agent_signal = attempt->agent_signal;
      outcome.stopped_by_job = attempt->ending == AttemptResult::Ending::kStoppedByJob;
      outcome.stuck_at_exit = attempt->stuck_at_exit;
      outcome.root_cause = attempt->root_cause;
      outcome.other_failures = attempt->other_failures;
      outcome.hang_places = attempt->hang_places;
      result.agent_signal = attempt->agent_signal;
    }
    JobDecision decision = (*link)->EndGeneration(outcome);
    if (!decision.hang_verdict.empty()) {  // node 0: the job's hang, judged from every node
      std::string verdict_path = JoinPath(Supervisor::AttemptDir(generation_plan, generation), "hang_verdict.txt");
      if (Status written = WriteFileAtomic(verdict_path, decision.hang_verdict); !written) {
        log::Warn("{}", written.error().message);
      }
    }
    result.exit_code = decision.exit_code;
    result.root_cause = decision.root_cause;
    if (decision.root_cause) result.attempt_causes.push_back(*decision.root_cause);
    result.other_failures = decision.other_failures;
    result.restarts = decision.restarts - plan.spec.restarts_before;
    result.master_port = layout.master_port;
    if (RecordExclusion(plan, generation_plan, generation, decision, (*link)->coordinates(), &result)) {
      if (telemetry != nullptr) {
        telemetry->SetState(telemetry::JobState::kFailed);
        telemetry->Publish();
      }
      return result;
    }
    if (telemetry != nullptr) {
      telemetry->SetState(decision.restart            ? telemetry::JobState::kRestarting
                          : decision.exit_code == 0 ? telemetry::JobState::kSucceeded
                                                    : telemetry::JobState::kFailed);
      telemetry->SetRestarts(decision.restarts);
      telemetry->Publish();
    }
    live.view.restarts = decision.restarts - plan.spec.restarts_before;
    live.view.state = decision.restart ? "restarting" : decision.exit_code == 0 ? "succeeded" : "failed";
    if (!decision.restart) return result;
  }
}

}  // namespace

Result<RunResult> RunWorkers(const LaunchSpec& spec) {
  auto plan = PlanLaunch(spec);
  if (!plan) return plan.error();
  WorkerEnvironment environment(*plan, environ);
  for (const auto& [name, value] : environment.replaced()) {
    log::Debug("{}={} from the environment is replaced by the agent's per-worker value", name, value);
  }

  // Made before the launch handles, which own the metrics server that reads
  // it, so that it outlives them.
  std::unique_ptr<telemetry::TelemetryHub> telemetry = MakeTelemetryHub(*plan, environment);
  auto handles = LaunchHandles::Start(std::string(kLaunchTokenVariable) + "=" + plan->token);
  if (!handles) return handles.error();

  auto live = std::make_shared<LiveLaunch>();
  live->view.run_id = plan->spec.run_id;
  live->view.host = plan->host;
  live->view.node_rank = plan->spec.node_rank;
  live->view.nnodes = plan->spec.nnodes;
  live->view.world_size = plan->world_size();
  live->view.restarts = 0;
  if (Status serving = ServeMetrics(*plan, **handles, live, telemetry.get()); !serving) return serving.error();

  RunResult result;
  result.log_dir = plan->spec.log_dir;
  result.run_id = plan->spec.run_id;
  result.master_addr = plan->spec.master_addr;
  result.master_port = plan->spec.master_port;
  if (plan->spec.nnodes > 1) return RunJobNode(*plan, **handles, telemetry.get(), std::move(result), *live);
  if (telemetry) telemetry->Publish();

  if (plan->spec.restarts_before > 0) {
    log::Info("the scheduler already restarted this job {} time{}; they count against --max-restarts {}",
              plan->spec.restarts_before, plan->spec.restarts_before == 1 ? "" : "s", plan->spec.max_restarts);
  }
  for (int attempt = plan->spec.restarts_before;; ++attempt) {
    LogStart(*plan, attempt);
    if (telemetry) {
      telemetry->BeginGeneration(attempt, 0, 1, plan->world_size(), attempt);
      telemetry->SetState(telemetry::JobState::kRunning);
    }
    Supervisor supervisor(*plan, environment, **handles, attempt, nullptr, telemetry.get());
    live->Start(supervisor, attempt);
    auto outcome = supervisor.Run();
    live->End(supervisor);
    if (!outcome) {
      if (telemetry) {
        telemetry->SetState(telemetry::JobState::kFailed);
        telemetry->Publish();
      }
      return outcome.error();
    }
    result.exit_code = outcome->exit_code;
    result.agent_signal = outcome->agent_signal;
    result.root_cause = outcome->root_cause;
    if (outcome->root_cause) result.attempt_causes.push_back(*outcome->root_cause);
    result.other_failures = outcome->other_failures;
    using Ending = AttemptResult::Ending;
    // A stuck exit comes after the work was done: a restart would redo nothing.
    if (outcome->ending == Ending::kSucceeded || outcome->ending == Ending::kAgentSignalled ||
        outcome->ending == Ending::kStuckAtExit) {
      break;
    }
    if (outcome->agent_signal != 0) {  // it came while the failed workers were being stopped
      log::Warn("received {} while stopping the failed workers: not restarting", io::SignalName(outcome->agent_signal));
      result.exit_code = 128 + outcome->agent_signal;
      break;
    }
    if (attempt >= plan->spec.max_restarts) {
      if (plan->spec.max_restarts > 0) {
        log::Error("giving up after {} restart{}", attempt, attempt == 1 ? "" : "s");
      }
      break;
    }
    if (telemetry) {
      telemetry->SetState(telemetry::JobState::kRestarting);
      telemetry->SetRestarts(attempt + 1);
      telemetry->Publish();
    }
    double backoff = BackoffSeconds(plan->spec, attempt);
    log::Warn("restarting all {} workers in {:g} s (restart {} of {})", plan->spec.nproc_per_node, backoff,
              attempt + 1, plan->spec.max_restarts);
    live->view.state = "restarting";
    live->view.restarts = attempt + 1 - plan->spec.restarts_before;
    int signal = (*handles)->SleepUnlessSignalled(SteadyClock::now() + Seconds(backoff));
    if (signal != 0) {
      log::Warn("received {} before the restart: not restarting", io::SignalName(signal));
      result.agent_signal = signal;
      result.exit_code = 128 + signal;
      break;
    }
    result.restarts = attempt + 1 - plan->spec.restarts_before;
  }
  if (telemetry) {
    telemetry->SetState(result.exit_code == 0       ? telemetry::JobState::kSucceeded
                        : result.agent_signal != 0 ? telemetry::JobState::kStopped
                                                   : telemetry::JobState::kFailed);
    telemetry->Publish();
  }
  live->view.state = result.exit_code == 0 ? "succeeded" : result.agent_signal != 0 ? "stopped" : "failed";
  return result;
}

}  // namespace primus::job
