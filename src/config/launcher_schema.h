// The launcher's own configuration keys: one table, one line per key. Adding
// a key is adding a line to kLauncherKeys in launcher_schema.cc; files,
// PRIMUS_<SECTION>_<KEY> variables, --set, `config show` and validation all
// follow from it.
#pragma once

#include "config/schema.h"

namespace primus::config {

const Schema& LauncherSchema();

}  // namespace primus::config
