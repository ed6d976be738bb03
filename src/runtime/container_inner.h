// The primus-cli command line that runs inside the container:
//
//   [--config FILE] [--debug ...] direct [direct flags] -- <task> [args]
//
// The outer primus-cli has already resolved the launcher configuration. The
// inner one must reach the same settings without the outer's command line
// or its scheduler's environment (SLURM_* is not forwarded), so every
// direct.* and main.* value that was set explicitly (flag, --set, an
// environment variable) or derived from the scheduler goes on as the
// matching flag (`--set KEY=VALUE` for a key without one). Values from
// configuration files are not copied: the files are mounted and read again
// inside, so they keep their lower precedence (an experiment's
// distributed.nproc_per_node still beats a file's direct.nproc_per_node).
// PRIMUS_* variables that are forwarded anyway are not repeated as flags.
// When the outer one found a scheduler, the inner one gets --platform none:
// its settings are all on the command line already.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "runtime/runtime.h"

namespace primus::runtime {

struct InnerCommandRequest {
  const Invocation* invocation = nullptr;
  size_t depth = 0;  // the container mode's index in launch->chain
  const config::LauncherConfig* launcher = nullptr;
  const std::vector<OptionSpec>* direct_options = nullptr;  // direct's table: key -> flag
  const std::vector<OptionSpec>* global_options = nullptr;  // GlobalOptions(): main.* -> flag
  std::set<std::string> forwarded_env;                      // variables that reach the container
  std::string config_file;                                  // the outer's --config file (absolute), or ""
};

// The arguments after the inner binary's path.
std::vector<std::string> InnerArguments(const InnerCommandRequest& inputs);

}  // namespace primus::runtime
