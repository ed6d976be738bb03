// The bridge from the launcher configuration to the environment plan: which
// profiles the user named (direct.profile), which variables they set on the
// command line (--env, --set direct.env.K=V, PRIMUS_DIRECT_ENV: these win over
// everything) and which in configuration files (ranked like an experiment's
// env:). info, run and train all build their request here, so the same
// launch explains the same environment everywhere.
#pragma once

#include <string>
#include <vector>

#include "config/launcher_config.h"
#include "platform/environment_plan.h"

namespace primus::platform {

EnvironmentPlanRequest PlanRequestFromLauncher(const config::LauncherConfig& launcher, const Environment& current,
                                       std::vector<EnvAssignment> experiment_env = {});

// True when a launcher value was given on the command line or in PRIMUS_*
// variables, rather than in a configuration file or by default.
bool SetExplicitly(const config::Origin& origin);

}  // namespace primus::platform
