// A runtime turns a launch into processes: `direct` runs the task here,
// `container` inside an engine, `slurm` through srun/sbatch, `k8s` in pods.
// Each runtime lives in its own file, declares its mode options (which map
// onto launcher-config keys, so a flag is just the top configuration layer)
// and registers itself; the command-line grammar is built from this registry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "util/error.h"
#include "util/option_parser.h"
#include "util/registry.h"

namespace primus::config {
class LauncherConfig;
}

namespace primus::runtime {

// One mode of a command line as the user wrote it, e.g.
// `slurm sbatch -N 64 -p gpu-prod -t 72:00:00 --job-name=x --`.
struct ModeInvocation {
  std::string mode;                      // direct | container | slurm | k8s
  std::string action;                    // slurm: srun | sbatch; k8s: manifest | submit | ""
  std::vector<ParsedOption> options;     // known mode options, in order
  std::vector<std::string> passthrough;  // unknown flags, verbatim, for the engine/srun/sbatch
  std::vector<std::string> written;      // every token between the mode name and "--"
};

// A parsed command line below the global options.
struct Invocation {
  std::vector<ModeInvocation> chain;     // outermost first; never empty
  std::string task;
  std::vector<std::string> task_args;    // subtask first
  bool implicit_direct = false;          // `primus-cli train ...` shorthand
  // How the command line was read where it says something in other words
  // (`direct --script F -- ARGS` is `direct -- run python3 F ARGS`; a torchrun
  // command line is `direct -- run`), for the plan.
  std::vector<std::string> notes;
  // "torchrun" when the command line was torchrun's (cli/torchrun_command.h).
  std::string program;
};

struct RuntimeContext {
  const Invocation* invocation = nullptr;
  std::vector<std::string> command_line;   // the whole argv as the user typed it
  size_t depth = 0;                        // which chain entry is executing
  const config::LauncherConfig* launcher = nullptr;  // effective launcher configuration
  bool dry_run = false;
  bool debug = false;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::string usage() const = 0;    // the synopsis line(s)
  virtual std::string details() const { return ""; }  // extra help paragraphs
  virtual std::vector<std::string> examples() const { return {}; }  // whole command lines, for help and man pages
  virtual const std::vector<OptionSpec>& options() const = 0;
  // Modes that may follow this one after "--" (e.g. slurm -> container).
  virtual std::vector<std::string> inner_modes() const { return {}; }
  // Sub-actions written right after the mode name (slurm: srun/sbatch).
  virtual std::vector<std::string> actions() const { return {}; }
  virtual std::string default_action() const { return ""; }
  virtual UnknownOptionPolicy unknown_options() const { return UnknownOptionPolicy::kReject; }
  // Primus's runner: the first word naming a task ends this mode's options
  // without a '--' (`container --image I train ...`), unless it follows an
  // unknown flag that may take it as its value.
  virtual bool task_word_ends_options() const { return false; }
  virtual Result<int> Execute(const RuntimeContext& context) = 0;
};

class RuntimeRegistry : public Registry<Runtime> {
 public:
  static RuntimeRegistry& Global();
  std::vector<std::string> Names() const;  // direct, container, slurm, ssh, k8s, then any others
};

template <typename T>
struct RuntimeRegistration {
  RuntimeRegistration() { RuntimeRegistry::Global().Register(std::make_unique<T>()); }
};

// The options every mode accepts too (--debug, --dry-run, ...), defined by
// the CLI layer and shared so that `direct --debug` works as the seeds write it.
const std::vector<OptionSpec>& GlobalOptions();

}  // namespace primus::runtime
