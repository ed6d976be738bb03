// The launcher's effective configuration, layered key by key (a later layer
// overrides only the keys it sets; it never replaces a whole file), lowest
// first:
//   1. built-in defaults                      origin "default"
//   1b. the defaults of the program the command line was written for, where
//      they differ from ours (torchrun's: one worker per node, ...)
//                                             origin "torchrun default"
//   2. /etc/primus/config.yaml                skipped when missing
//   3. ~/.config/primus/config.yaml           ($XDG_CONFIG_HOME when set); skipped when missing
//   4. ./.primus.yaml                         skipped when missing
//   5. --config FILE                          an error when missing
//   5a. the experiment's launch settings      added by `train` once it has read its
//      experiment (WithExperimentLayer; train/launch_settings.h), origin
//      "experiment exp.yaml:12:5"
//   5b. the scheduler's distributed settings  Slurm step or pod conventions
//      (scheduler_settings.h), chosen by direct.platform
//   6. environment: PET_* (torchrun's), then PRIMUS_<KEY> (section main only),
//      then PRIMUS_<SECTION>_<KEY>; lists comma-separated
//   7. command line: --set a.b=c, then the CLI's own flags (--image ...)
// Every layer is validated against LauncherSchema(), so a typo anywhere is a
// located ConfigError (exit code 3) with a suggestion. The experiment's layer
// sits where the rule "the experiment's values beat the launcher's files and
// defaults, a flag, PRIMUS_* variable or the scheduler beats the experiment"
// puts it, so `config show --origin` and every getter tell the same story.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/environment.h"
#include "config/scheduler_settings.h"
#include "config/value.h"
#include "util/error.h"

namespace primus::config {

// One command-line flag that sets a configuration key, as the CLI passes it
// in: `--image rocm/primus` -> {"container.image", {"rocm/primus"}, "--image"}.
struct FlagSetting {
  std::string key;  // a LauncherSchema() path
  // Scalar keys: the last value wins; a boolean key with no value is true.
  // List keys: each value is one item; repeated flags append to each other
  // (and together replace the lists of lower layers). Map keys: NAME=VALUE.
  std::vector<std::string> values;
  std::string flag;  // "--image"; origins read "flag --image"
  // A flag's value read from the environment variable named by `flag`
  // (torchrun reads PET_NNODES for --nnodes): origin "env PET_NNODES".
  bool from_environment = false;
};

// Everything the layering reads, explicit so that tests never touch the real
// /etc, $HOME or environment. An empty file path skips that layer.
struct LauncherSources {
  std::string system_file;
  std::string user_file;
  std::string project_file;
  std::string explicit_file;  // --config FILE; empty when not given
  Environment environment;    // PRIMUS_*, PET_*, and ${VAR} inside the files
  std::vector<std::string> set_assignments;  // --set values, in order
  std::vector<FlagSetting> flags;            // in command-line order
  // Layer 1b: another program's defaults (torchrun's), named by `program`.
  std::vector<FlagSetting> program_defaults;
  std::string program;
  // Whether the scheduler layer is read. Off on the launching side of slurm
  // and k8s (a login node): direct.platform there is meant for the nodes.
  bool detect_scheduler = true;

  // The real paths and this process's environment.
  static LauncherSources FromProcess(std::string explicit_file,
                                     std::vector<std::string> set_assignments,
                                     std::vector<FlagSetting> flags);
};

// The effective configuration: every LauncherSchema() key present, with its
// type and origin. Getters take a schema path; a path that is not in the
// schema, or the wrong getter for its type, is a programming error and aborts.
class LauncherConfig {
 public:
  // A configuration given as one tree (tests): all of it counts as below
  // the experiment's layer.
  LauncherConfig(Value effective, std::vector<std::string> warnings, SchedulerSettings scheduler = {});
  // The layers apart: defaults and files below the experiment's layer, the
  // scheduler, environment, --set and flags (in that order) above it.
  LauncherConfig(Value below_experiment, std::vector<Value> above_experiment, std::vector<std::string> warnings,
                 SchedulerSettings scheduler);

  // This configuration with layer 5a, the experiment's launch settings
  // (schema paths, each value with its origin in the experiment file),
  // merged in its place. The layer is checked against LauncherSchema().
  Result<LauncherConfig> WithExperimentLayer(Value layer) const;

  const Value& effective() const { return effective_; }
  // Non-fatal findings, e.g. an unknown PRIMUS_DIRECT_* variable (likely a typo).
  const std::vector<std::string>& warnings() const { return warnings_; }
  // The scheduler found in the environment (empty scheduler name: none).
  const SchedulerSettings& scheduler() const { return scheduler_; }

  const std::string& GetString(std::string_view path) const;
  int64_t GetInt(std::string_view path) const;
  double GetDouble(std::string_view path) const;
  bool GetBool(std::string_view path) const;
  std::vector<std::string> GetStringList(std::string_view path) const;
  std::vector<std::pair<std::string, std::string>> GetStringMap(std::string_view path) const;
  const Origin& OriginOf(std::string_view path) const;

 private:
  const Value& Leaf(std::string_view path, Value::Kind kind) const;

  Value below_experiment_;
  std::vector<Value> above_experiment_;
  Value effective_;
  std::vector<std::string> warnings_;
  SchedulerSettings scheduler_;
};

Result<LauncherConfig> LoadLauncherConfig(const LauncherSources& sources);

// The variables that set a key, lowest precedence first:
// "direct.nnodes" -> {PET_NNODES, PRIMUS_DIRECT_NNODES};
// "main.log_level" -> {PRIMUS_LOG_LEVEL, PRIMUS_MAIN_LOG_LEVEL}.
std::vector<std::string> EnvironmentVariablesFor(std::string_view path);

}  // namespace primus::config
