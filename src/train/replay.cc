#include "train/replay.h"

#include <fmt/format.h>

#include <set>

#include "util/files.h"

namespace primus::train {

Result<ReplaySource> LoadReplaySource(const std::string& directory) {
  std::string root = directory;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (!IsDirectory(root)) {
    return UsageError("--replay " + directory + ": no such directory", "give an experiment directory such as output/exp_2025_11_10_134522/");
  }
  ReplaySource source;
  source.dir.root = root;
  source.resolved_config = source.dir.config_dir() + "/resolved.yaml";
  if (!PathExists(source.resolved_config) || !PathExists(source.dir.metadata_file())) {
    return ConfigError("--replay " + directory + " is not a primus-cli experiment directory (no config/resolved.yaml or metadata.json)",
                       "experiment directories are created under the workspace by 'train'");
  }
  auto metadata = snapshot::ReadMetadata(source.dir.metadata_file());
  if (!metadata.ok()) return metadata.error();
  source.metadata = *metadata;
  auto env = snapshot::ReadEnvironment(source.dir);
  if (!env.ok()) return env.error();
  source.env = *env;
  auto system = snapshot::ReadSystemInfo(source.dir);
  if (!system.ok()) return system.error();
  source.system = *system;
  return source;
}

bool IsReplayedVariable(const std::string& name) {
  static const std::set<std::string> kSession = {
      "PATH", "HOME", "USER", "LOGNAME", "PWD", "OLDPWD", "SHELL", "TERM", "SHLVL", "HOSTNAME", "_", "DISPLAY",
      "TMPDIR", "LS_COLORS", "MAIL", "COLUMNS", "LINES", "TZ",
      // the node agent's, per launch and per rank
      "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_NAME",
      "ROLE_RANK", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "NODE_RANK", "NNODES", "PRIMUS_HEARTBEAT_FILE"};
  for (const char* prefix : {"SSH_", "XDG_", "TORCHELASTIC_", "SLURM_", "PRIMUS_JOB_", "OMPI_", "PMIX_"}) {
    if (name.starts_with(prefix)) return false;
  }
  return !kSession.count(name);
}

std::vector<SystemDifference> CompareSystems(const nlohmann::json& then, const nlohmann::json& now) {
  struct Field {
    const char* key;
    const char* what;
    bool incompatible;
  };
  static const Field fields[] = {
      {"gpu_vendor", "GPU vendor", true}, {"gpu_model", "GPU model", true},  {"gpu_count", "GPUs on this node", true},
      {"driver", "GPU driver", false},    {"python", "Python", false},       {"torch", "PyTorch", false},
      {"nccl", "NCCL/RCCL", false},       {"host", "host", false},           {"cpus", "CPUs", false},
      {"primus_version", "primus-cli", false},   {"primus_backend", "Primus", false},
  };
  auto text = [](const nlohmann::json& json, const char* key) {
    if (!json.contains(key) || json[key].is_null()) return std::string("-");
    return json[key].is_string() ? json[key].get<std::string>() : json[key].dump();
  };
  std::vector<SystemDifference> differences;
  for (const Field& field : fields) {
    std::string a = text(then, field.key), b = text(now, field.key);
    if (a != b) differences.push_back({field.what, a, b, field.incompatible});
  }
  return differences;
}

std::string FormatDifferences(const std::vector<SystemDifference>& differences) {
  if (differences.empty()) return "  (no differences: same GPUs, versions and host)\n";
  std::string out = fmt::format("  {:<18} {:<28} {:<28}\n", "", "then", "now");
  for (const auto& d : differences) {
    out += fmt::format("  {:<18} {:<28} {:<28}{}\n", d.what, d.then, d.now, d.incompatible ? "  INCOMPATIBLE" : "");
  }
  return out;
}

}  // namespace primus::train
