#include "agent/run_workers.h"

#include <algorithm>
#include <cmath>

#include "agent/agent_runtime.h"
#include "agent/launch_plan.h"
#include "agent/signal_channel.h"
#include "agent/supervisor.h"
#include "agent/worker_env.h"
#include "util/log.h"
#include "util/strings.h"

extern char** environ;

namespace primus::agent {
namespace {

double BackoffSeconds(const LaunchSpec& spec, int restart_index) {
  double backoff = spec.restart_backoff_s * std::pow(2.0, std::min(restart_index, 30));
  return std::min(backoff, spec.max_restart_backoff_s);
}

void LogStart(const LaunchPlan& plan, int attempt) {
  const LaunchSpec& spec = plan.spec;
  int first = plan.global_rank(0);
  int last = plan.global_rank(spec.nproc_per_node - 1);
  std::string ranks = first == last ? "rank " + std::to_string(first)
                                    : "ranks " + std::to_string(first) + "-" + std::to_string(last);
  log::Info("{} {} worker{} ({} of world size {}): {}; master {}:{}; logs in {}",
            attempt == 0 ? "starting" : fmt::format("restart {}/{}: starting", attempt, spec.max_restarts),
            spec.nproc_per_node, spec.nproc_per_node == 1 ? "" : "s", ranks, plan.world_size(),
            ShellJoin(spec.argv), spec.master_addr, spec.master_port,
            Supervisor::AttemptDir(plan, attempt));
}

}  // namespace

Result<RunResult> RunWorkers(const LaunchSpec& spec) {
  auto plan = PlanLaunch(spec);
  if (!plan) return plan.error();
  WorkerEnvironment environment(*plan, environ);
  for (const auto& [name, value] : environment.replaced()) {
    log::Debug("{}={} from the environment is replaced by the agent's per-worker value", name, value);
  }

  auto runtime = AgentRuntime::Start(std::string(kLaunchTokenVariable) + "=" + plan->token);
  if (!runtime) return runtime.error();

  RunResult result;
  result.log_dir = plan->spec.log_dir;
  result.run_id = plan->spec.run_id;
  result.master_addr = plan->spec.master_addr;
  result.master_port = plan->spec.master_port;
  for (int attempt = 0;; ++attempt) {
    LogStart(*plan, attempt);
    Supervisor supervisor(*plan, environment, **runtime, attempt);
    auto outcome = supervisor.Run();
    if (!outcome) return outcome.error();
    result.exit_code = outcome->exit_code;
    result.agent_signal = outcome->agent_signal;
    result.root_cause = outcome->root_cause;
    result.other_failures = outcome->other_failures;
    using Ending = AttemptResult::Ending;
    if (outcome->ending == Ending::kSucceeded || outcome->ending == Ending::kAgentSignalled) break;
    if (attempt >= plan->spec.max_restarts) {
      if (plan->spec.max_restarts > 0) {
        log::Error("giving up after {} restart{}", attempt, attempt == 1 ? "" : "s");
      }
      break;
    }
    double backoff = BackoffSeconds(plan->spec, attempt);
    log::Warn("restarting all {} workers in {:g} s (restart {} of {})", plan->spec.nproc_per_node, backoff,
              attempt + 1, plan->spec.max_restarts);
    int signal = (*runtime)->SleepUnlessSignalled(SteadyClock::now() + Seconds(backoff));
    if (signal != 0) {
      log::Warn("received {} before the restart: not restarting", SignalName(signal));
      result.agent_signal = signal;
      result.exit_code = 128 + signal;
      break;
    }
    result.restarts = attempt + 1;
  }
  return result;
}

}  // namespace primus::agent
