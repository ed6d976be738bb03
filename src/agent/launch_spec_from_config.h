// The LaunchSpec of a `direct` launch, read from the effective launcher
// configuration (the direct.* keys, whatever layer set them: defaults, files,
// PET_*/PRIMUS_DIRECT_* variables, --set, flags) and the worker command.
// Shared by the tasks that run workers under the agent (run, later train,
// benchmark, preflight).
#pragma once

#include <string>
#include <vector>

#include "agent/launch_spec.h"
#include "config/launcher_config.h"
#include "util/error.h"

namespace primus::agent {

// direct.env entries given on the command line (--env, --set) override the
// agent's inherited environment (spec.env_overrides); those from files and
// variables are defaults, applied only where the variable is unset (spec.env).
Result<LaunchSpec> LaunchSpecFromConfig(const config::LauncherConfig& launcher, std::vector<std::string> argv);

}  // namespace primus::agent
