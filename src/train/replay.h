// --replay DIR: run an earlier experiment again with its recorded resolved
// configuration, environment and backend arguments, in its recorded working
// directory. Before anything starts, the recorded system (env/system_info.json),
// code (git commit and uncommitted changes) and layout (metadata.json) are
// compared with now: a different GPU model, vendor or count, different code
// or a different layout makes the replay refuse (unless --force), other
// differences (versions, hosts, driver) are listed as warnings. Values that
// were redacted when recorded must come from the current environment.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/value.h"

#include "snapshot/experiment_dir.h"
#include "snapshot/metadata.h"
#include "snapshot/snapshot_files.h"
#include "util/error.h"

namespace primus::train {

struct ReplaySource {
  snapshot::ExperimentDir dir;
  std::string resolved_config;        // path of config/resolved.yaml
  snapshot::RunMetadata metadata;
  snapshot::EnvWithOrigins env;
  nlohmann::json system;
};

Result<ReplaySource> LoadReplaySource(const std::string& directory);

struct SystemDifference {
  std::string what;
  std::string then;
  std::string now;
  bool incompatible = false;
};

// Whether a recorded variable is restored by a replay: everything except what
// belongs to the machine or session (PATH, HOME, SSH_*, ...) and what the node
// agent sets per launch (RANK, MASTER_PORT, TORCHELASTIC_*, ...).
bool IsReplayedVariable(const std::string& name);

// Whether a variable decides which code runs: a preloaded or searched
// library, a plugin, the interpreter's path and startup, a shell's (LD_*,
// DYLD_*, PYTHON*, BASH_ENV, ENV, PATH, *_LIBRARY_PATH, *_PRELOAD, *_PLUGIN,
// BASH_FUNC_*, GCONV_PATH, GLIBC_TUNABLES, NODE_OPTIONS, PERL5LIB, PERL5OPT,
// RUBYOPT, RUBYLIB, JAVA_TOOL_OPTIONS, PS4, SHELLOPTS, BASHOPTS, HSA_TOOLS_LIB,
// CUDA_INJECTION64_PATH, NCCL_NET, TORCH_EXTENSIONS_DIR, TORCHINDUCTOR_CACHE_DIR,
// TRITON_CACHE_DIR).
bool ChangesWhatRuns(const std::string& variable);

// What a replay takes from the recorded run that changes which code runs
// here, one line each for the replay header and --dry-run ("LD_PRELOAD=
// /tmp/x.so (now unset), from env/env.json"). Every such line is shown; a
// line `needs_force` when the launch must not run it without --force:
//   - a replayed variable of ChangesWhatRuns (from env/env.json or the
//     experiment's env:) whose value differs from `now` (needs --force);
//   - python.interpreter, python.venv, python.conda_env: shown when set;
//     needs --force when the interpreter differs from the one the recorded
//     run ran (env/system_info.json's python_interpreter; a snapshot of an
//     older primus-cli does not say, and is shown only);
//   - each hook directory (hooks.dirs): shown; needs --force when it is not
//     the user's alone (another user owns it or may write to it);
//   - a snapshot file that another user owns or may write to (needs --force).
struct ReplayRisk {
  std::string text;
  bool needs_force = false;
};
std::vector<ReplayRisk> ReplayRisks(const ReplaySource& source, const config::Value& resolved,
                                    const std::string& interpreter, const std::map<std::string, std::string>& now);

std::vector<SystemDifference> CompareSystems(const nlohmann::json& then, const nlohmann::json& now);
// The code and the layout against the recorded run's (metadata.json's git and
// launch.layout; a snapshot that did not record one is not compared on it):
// a different commit, different uncommitted changes (their hash), another
// entry script (its hash: launch.code_files' first), or another
// count of nodes, workers per node or world size. Every one is incompatible:
// the run would not be the same.
std::vector<SystemDifference> CompareLaunch(const snapshot::RunMetadata& then, const std::optional<snapshot::GitState>& git_now,
                                           const snapshot::RunLayout& layout_now);
std::string FormatDifferences(const std::vector<SystemDifference>& differences);

}  // namespace primus::train
