// The command lines of the Slurm runtime, built from the parsed launch and
// the launcher configuration with no side effects:
//
//   srun --ntasks-per-node=1 --kill-on-bad-exit=1 [slurm.* flags] [slurm.options] [pass-through]
//        /abs/primus-cli [global options] direct [direct options] -- <task> [args]
//
// One task per node runs one node agent, which starts that node's workers;
// --kill-on-bad-exit ends the whole step when one agent fails. The global
// options of the original command line (--config, --set, --log-level, ...)
// travel to every node; --dry-run never does. An inner `container ... --`
// runs instead of `direct` when the user wrote one.
#pragma once

#include <string>
#include <vector>

#include "config/launcher_config.h"
#include "runtime/runtime.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::runtime {

// srun/sbatch flags from the slurm.* keys, in this order: --nodes=N (or
// MIN-MAX, slurm_nodes.h), --partition=, --account=, --time=, --qos=,
// --reservation=, --gpus-per-node=G (empty strings and 0 are left out), then
// slurm.options. `explicit_only` keeps only values given by flag, --set or
// PRIMUS_SLURM_* (inside an allocation, the files' defaults are for new
// allocations). A malformed slurm.nodes is a ConfigError naming its origin.
Result<std::vector<std::string>> SlurmFlagsFromConfig(const config::LauncherConfig& launcher, bool explicit_only);

// The global options of `context.command_line` (those before the mode, and
// long ones written among the slurm options), as tokens to repeat on each
// node. `mode_options` is the slurm mode's own table. --dry-run, --help and
// --version are dropped.
std::vector<std::string> GlobalArguments(const RuntimeContext& context, const std::vector<OptionSpec>& mode_options);

// What follows `slurm ... --` on each node: the inner modes with the options
// as written (`direct --` when there are none), then the task and its
// arguments.
std::vector<std::string> InnerCommand(const Invocation& invocation, size_t depth);

// srun [fixed flags] [flags] [pass-through] [node command].
std::vector<std::string> SrunCommand(const std::vector<std::string>& flags, const std::vector<std::string>& passthrough,
                                     const std::vector<std::string>& node_command);

}  // namespace primus::runtime
