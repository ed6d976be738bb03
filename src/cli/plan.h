// What --dry-run prints: each mode of the chain with its effective options
// and where each value came from (default, a config file with line, an
// environment variable, a flag), the flags passed through unchanged, the
// task and its arguments. Nothing is executed to produce it.
#pragma once

#include <string>

#include "runtime/runtime.h"

namespace primus::config {
class LauncherConfig;
}

namespace primus::cli {

std::string FormatPlan(const runtime::Invocation& invocation, const config::LauncherConfig& launcher);

}  // namespace primus::cli
