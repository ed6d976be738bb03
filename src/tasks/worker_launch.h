// The one way a task runs workers under the node agent (run, train, primus,
// benchmark), in three steps:
//   1. PrepareWorkerLaunch: the direct.* launcher keys become the agent's
//      LaunchSpec; `shape` (optional) changes the layout before the platform
//      counts GPUs (benchmark's one CPU worker, node_smoke's one per node);
//      then the platform layer adds the GPU count, the environment plan and
//      --numa-bind placement (agent::ApplyPlatform).
//   2. The task sets the worker command, spec.argv, once it knows it (after
//      the platform, for tasks whose command depends on the GPUs found).
//   3. DescribeWorkerLaunch under --dry-run (the layout and every variable
//      with its origin; nothing starts), or RunWorkerLaunch.
// WorkerLaunchExitCode is the one exit-code rule of a finished launch: the
// root-cause worker's own code, or direct.failure_exit_code when the workers
// failed and that is set (docs/agent.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/launch_spec.h"
#include "agent/platform_setup.h"
#include "config/launcher_config.h"
#include "util/error.h"

namespace primus::tasks {

struct WorkerLaunch {
  agent::LaunchSpec spec;       // spec.argv: empty until the task sets it (step 2)
  agent::PlatformSetup setup;   // the host found and the worker environment plan
};

// `experiment_env`: an experiment's env: block, which joins the plan above the
// user's environment (train).
Result<WorkerLaunch> PrepareWorkerLaunch(const config::LauncherConfig& launcher,
                                         std::vector<platform::EnvAssignment> experiment_env = {},
                                         const std::function<void(agent::LaunchSpec*)>& shape = nullptr);

// The --dry-run text: the layout and the worker environment with origins.
std::string DescribeWorkerLaunch(const WorkerLaunch& launch);

// Runs the workers; an Error only for what prevented the launch (job::RunWorkers).
Result<agent::RunResult> RunWorkerLaunch(const WorkerLaunch& launch);

// The launcher's exit code for a finished launch: 0; 128+N when the launcher
// itself was stopped by signal N; 6 when the work finished but a worker was
// stuck at exit; when the workers failed, the root-cause worker's own code
// (128+signal for one killed by a signal), or direct.failure_exit_code when
// it is set (not 0). Invoked as torchrun, a
// worker code other than torchrun's 1 is explained once in the log.
int WorkerLaunchExitCode(const agent::RunResult& result, const config::LauncherConfig& launcher,
                         bool as_torchrun = false);

}  // namespace primus::tasks
