// torchrun's command line (torch.distributed.run of torch 2.x), read as one
// of ours: `torchrun [flags] script [args]` becomes `direct` with the
// direct.* settings its flags (and PET_* variables) mean, and the `run`
// task with the worker command torchrun would start (`python -u script`,
// `-m module`, `--no-python`, `--run-path`). The agent, its logs, the root
// cause and the --dry-run plan are then direct's. Every flag is either
// mapped, accepted as not needed (said at debug level), or refused with a
// usage error naming it; what we cannot do yet (elastic node counts,
// dynamic node ranks, etcd) is refused, never pretended. docs/torchrun.md
// is the user's table of all of them.
#pragma once

#include <string>
#include <vector>

#include "util/environment.h"
#include "config/launcher_config.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::cli {

struct TorchrunRequest {
  std::vector<std::string> args;    // everything after `torchrun`
  Environment environment;  // PET_* (torchrun's flags), PYTHON_EXEC
  std::string fresh_run_id;         // names the launch when --rdzv-id does not (with --log-dir)
  // The interpreter beside the torchrun that was run (/venv/bin/torchrun ->
  // /venv/bin/python3), which real torchrun's workers would use; "" when none.
  std::string python_beside;
};

struct TorchrunNote {
  enum class Level {
    kPlan,   // part of the --dry-run plan (debug level otherwise)
    kDebug,  // a flag that only tunes torchrun's internals
    kWarn,   // a value we accept but cannot honour
  };
  Level level = Level::kPlan;
  std::string text;
};

struct TorchrunCommand {
  bool help = false;                          // -h/--help: nothing else was read
  bool version = false;                       // primus-cli's --version: nothing else was read
  std::vector<std::string> our_options;       // primus-cli's global options written among torchrun's (--dry-run ...)
  std::vector<config::FlagSetting> settings;  // from torchrun's flags and PET_* variables
  std::vector<config::FlagSetting> defaults;  // torchrun's defaults where ours differ ("torchrun default")
  std::vector<std::string> worker_argv;       // the `run` task's command
  std::vector<TorchrunNote> notes;
};

// A malformed or unsupported command line is a UsageError (exit 2) naming
// the flag or PET_* variable as written, with a hint.
Result<TorchrunCommand> ReadTorchrunCommand(const TorchrunRequest& inputs);

// `torchrun --help`: torchrun's synopsis and what each flag does here.
std::string TorchrunHelp();

// torchrun's flags as an option table, for shell completion (every
// spelling; the values of those that have a few).
const std::vector<OptionSpec>& TorchrunOptions();

}  // namespace primus::cli
