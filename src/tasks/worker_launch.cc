#include "tasks/worker_launch.h"

#include "agent/launch_spec_from_config.h"
#include "agent/launch_summary.h"
#include "job/run_workers.h"
#include "util/log.h"

namespace primus::tasks {

Result<WorkerLaunch> PrepareWorkerLaunch(const config::LauncherConfig& launcher,
                                         std::vector<platform::EnvAssignment> experiment_env,
                                         const std::function<void(agent::LaunchSpec*)>& shape) {
  auto spec = agent::LaunchSpecFromConfig(launcher);
  if (!spec.ok()) return spec.error();
  WorkerLaunch launch;
  launch.spec = std::move(*spec);
  if (shape) shape(&launch.spec);
  auto setup = agent::ApplyPlatform(launcher, std::move(experiment_env), &launch.spec);
  if (!setup.ok()) return setup.error();
  launch.setup = std::move(*setup);
  return launch;
}

std::string DescribeWorkerLaunch(const WorkerLaunch& launch) {
  return agent::DescribeLaunch(launch.spec) + agent::DescribeWorkerEnvironment(launch.setup);
}

Result<agent::RunResult> RunWorkerLaunch(const WorkerLaunch& launch) { return job::RunWorkers(launch.spec); }

int WorkerLaunchExitCode(const agent::RunResult& result, const config::LauncherConfig& launcher, bool as_torchrun) {
  // Stuck at exit (6) is not a failure of the work: it keeps its own code.
  bool stuck_at_exit = !result.root_cause && result.exit_code == static_cast<int>(ExitCode::kStuckAtExit);
  if (result.exit_code == 0 || result.agent_signal != 0 || stuck_at_exit) return result.exit_code;
  int configured = static_cast<int>(launcher.GetInt("direct.failure_exit_code"));
  if (configured != 0) return configured;
  if (as_torchrun && result.exit_code != 1) {
    log::Info("exit code {} is the failing worker's own (torchrun exits 1 whatever the worker's code); for torchrun's, "
              "set PRIMUS_DIRECT_FAILURE_EXIT_CODE=1 (docs/torchrun.md)",
              result.exit_code);
  }
  return result.exit_code;
}

}  // namespace primus::tasks
