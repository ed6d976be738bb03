// What goes into an experiment directory besides metadata.json:
//   config/  every file of the extends chain as given (byte for byte, secrets
//            redacted), and resolved.yaml, the configuration the run used;
//   env/     primus_env_dump.txt (KEY=VALUE), env.json (value and origin of
//            each variable the workers received), system_info.json;
//   hooks/   a copy of each hook and patch that ran (what a replay runs).
// Everything goes through the Redactor: YAML files as YAML (the values of
// secret keys too), JSON as data.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "snapshot/experiment_dir.h"
#include "snapshot/metadata.h"
#include "snapshot/redaction.h"
#include "util/error.h"

namespace primus::snapshot {

struct EnvEntry {
  std::string value;
  std::string origin;  // "user environment", "experiment env", "--env", "hook 01_data.sh", "profile ...", ...
};
using EnvWithOrigins = std::map<std::string, EnvEntry>;

// Copies each source file into config/ (flattened names, collisions
// numbered) and writes config/resolved.yaml; returns the copied names.
Result<std::vector<std::string>> WriteConfigFiles(const ExperimentDir& dir, const std::vector<std::string>& sources,
                                                  const std::string& resolved_yaml, const Redactor& redactor);

Status WriteEnvironment(const ExperimentDir& dir, const EnvWithOrigins& env, const Redactor& redactor);
Result<EnvWithOrigins> ReadEnvironment(const ExperimentDir& dir);

// The SHA-256 of a regular file (at most 64 MiB), as hex.
Result<std::string> FileSha256(const std::string& path);

// Copies the hook or patch at `path` to hooks/<NN>_<name> (NN: `index`, from
// 01), executable when the original is; returns what metadata.json records.
Result<RecordedScript> KeepScriptCopy(const ExperimentDir& dir, size_t index, const std::string& kind,
                                      const std::string& path);

Status WriteSystemInfo(const ExperimentDir& dir, const nlohmann::ordered_json& info, const Redactor& redactor);
Result<nlohmann::json> ReadSystemInfo(const ExperimentDir& dir);

}  // namespace primus::snapshot
