// The command grammar:
//
//   primus-cli [global options] <mode> [mode options] -- [<mode> ... --] <task> [subtask] [args]
//   primus-cli [global options] <task> [subtask] [args]          (shorthand for direct)
//   primus-cli [global options] config show [--origin]
//   primus-cli [global options] help [mode|task]
//
// Modes and tasks come from their registries. A mode may be followed by the
// modes it allows (slurm -> container -> direct). Global options are also
// accepted among any mode's options (`direct --debug`), and everything after
// the task name belongs to the task.
#pragma once

#include <string>
#include <vector>

#include "runtime/runtime.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::cli {

struct GlobalSettings {
  std::string config_file;                   // --config
  std::vector<std::string> set_assignments;  // --set a.b=c, in order
  std::vector<ParsedOption> config_flags;    // --debug, --log-level ...: flags that map to config keys
  std::string log_file;                      // --log-file: a copy of everything printed
  bool dry_run = false;
  bool help = false;
  bool version = false;
};

struct CommandLine {
  enum class Kind {
    kLaunch,         // run (or --dry-run) a launch
    kHelp,           // top-level help, or help for help_topic
    kVersion,
    kConfigCommand,  // `config ...` with builtin_args
  };
  Kind kind = Kind::kHelp;
  GlobalSettings globals;
  runtime::Launch launch;
  std::string help_topic;                 // a mode or task name; "" for the overview
  std::vector<std::string> builtin_args;  // arguments of a built-in command
};

// `args` excludes argv[0].
Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

}  // namespace primus::cli
