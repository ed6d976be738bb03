// The launcher's own configuration keys: one table, one line per key. Adding
// a key is adding a line to kLauncherKeys in launcher_schema.cc; files,
// PRIMUS_<SECTION>_<KEY> variables, --set, `config show` and validation all
// follow from it.
#pragma once

#include "config/schema.h"

namespace primus::config {

const Schema& LauncherSchema();

// The experiment keys that are launcher settings (train/launch_settings.h
// makes them a layer): experiment key -> the launcher key it sets. Where a
// flag or variable beats the experiment, the launcher key holds what ran.
const std::vector<std::pair<std::string, std::string>>& ExperimentLaunchKeys();

}  // namespace primus::config
