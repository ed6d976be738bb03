// The LaunchSpec of a `direct` launch, read from the effective launcher
// configuration (the direct.* keys, whatever layer set them: defaults, files,
// PET_*/PRIMUS_DIRECT_* variables, --set, flags). The worker command,
// spec.argv, is the caller's to set. The tasks reach it through
// tasks/worker_launch.h, the one launch path.
#pragma once

#include <string>
#include <vector>

#include "agent/launch_spec.h"
#include "config/launcher_config.h"
#include "util/error.h"

namespace primus::agent {

// direct.env entries given explicitly (--env, --set, PRIMUS_DIRECT_ENV) override
// the agent's inherited environment (spec.env_overrides); those from files are
// defaults, applied only where the variable is unset (spec.env). ApplyPlatform
// (platform_setup.h) later replaces both with the environment plan.
// nproc_per_node "auto"/"gpu" is left for ApplyPlatform to count
// (spec.nproc_per_node_auto); "cpu" is the CPUs this process may use.
Result<LaunchSpec> LaunchSpecFromConfig(const config::LauncherConfig& launcher);

}  // namespace primus::agent
