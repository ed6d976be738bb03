// The command grammar:
//
//   primus-cli [global options] <mode> [mode options] -- [<mode> ... --] <task> [subtask] [args]
//   primus-cli [global options] <task> [subtask] [args]          (shorthand for direct)
//   primus-cli [global options] config show [--origin]
//   primus-cli completion bash|zsh|fish              (the shell's completion script)
//   primus-cli [global options] help [mode|task]
//   primus-cli [global options] torchrun [torchrun's flags] script [args]
//   torchrun [torchrun's flags] script [args]      (a link named torchrun)
//
// Modes and tasks come from their registries. A mode may be followed by the
// modes it allows (slurm -> container -> direct). Global options are also
// accepted among any mode's options (`direct --debug`), and everything after
// the task name belongs to the task. torchrun's command line is read by
// cli/torchrun_command.h into a `direct -- run` launch.
#pragma once

#include <string>
#include <vector>

#include "cli/torchrun_command.h"
#include "util/environment.h"
#include "config/launcher_config.h"
#include "runtime/runtime.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::cli {

struct GlobalSettings {
  std::string config_file;                   // --config
  std::vector<std::string> set_assignments;  // --set a.b=c, in order
  std::vector<ParsedOption> config_flags;    // --debug, --log-level ...: flags that map to config keys
  std::string log_file;                      // --log-file: a copy of everything printed
  bool silent = false;                       // --silent: stdout goes nowhere (the log file still gets it)
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
    kCompletion,     // `completion SHELL` with builtin_args
  };
  Kind kind = Kind::kHelp;
  GlobalSettings globals;
  runtime::Invocation invocation;
  std::string help_topic;                 // a mode or task name; "" for the overview
  std::vector<std::string> builtin_args;  // arguments of a built-in command

  // torchrun's command line: its flags and PET_* variables as configuration
  // (after the flags of the grammar), torchrun's defaults where ours differ,
  // what to log about them, and the command line as the user typed it.
  std::vector<config::FlagSetting> translated_settings;
  std::vector<config::FlagSetting> program_defaults;
  std::vector<TorchrunNote> notes;
  std::vector<std::string> typed;  // {"torchrun", args...}; empty for primus-cli's own grammar
};

// `args` excludes argv[0]; `program` is argv[0]'s base name: "torchrun"
// reads the whole of `args` as torchrun's. `environment` gives torchrun's
// PET_* variables and PYTHON_EXEC; `python_beside`, the interpreter beside
// the torchrun link that was run (its workers' python when PYTHON_EXEC is unset).
Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args, const Environment& environment = {},
                                     std::string_view program = "primus-cli", const std::string& python_beside = "");

}  // namespace primus::cli
