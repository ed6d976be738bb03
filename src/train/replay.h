// --replay DIR: run an earlier experiment again with its recorded resolved
// configuration and environment. Before anything starts, the recorded system
// (env/system_info.json) is compared with this one: a different GPU model,
// vendor or count makes the replay refuse (unless --force), other differences
// (versions, hosts, driver) are listed as warnings. Values that were redacted
// when recorded must come from the current environment.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

std::vector<SystemDifference> CompareSystems(const nlohmann::json& then, const nlohmann::json& now);
std::string FormatDifferences(const std::vector<SystemDifference>& differences);

}  // namespace primus::train
