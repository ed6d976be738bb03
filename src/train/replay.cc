#include "train/replay.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "snapshot/redaction.h"
#include "util/files.h"
#include "util/private_files.h"
#include "util/strings.h"

namespace primus::train {

Result<ReplaySource> LoadReplaySource(const std::string& directory) {
  std::string root = directory;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (!IsDirectory(root)) {
    return UsageError("--replay " + directory + ": no such directory", "give an experiment directory such as output/exp_2025_11_10_134522/");
  }
  ReplaySource source;
  // Absolute: a replay runs in the recorded working directory.
  source.dir.root = std::filesystem::absolute(root).lexically_normal().string();
  while (source.dir.root.size() > 1 && source.dir.root.back() == '/') source.dir.root.pop_back();
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

bool ChangesWhatRuns(const std::string& variable) {
  static const std::set<std::string> kNames = {
      "BASH_ENV", "ENV", "PATH", "GCONV_PATH", "NODE_OPTIONS", "PERL5LIB", "PERL5OPT", "RUBYOPT", "RUBYLIB",
      "JAVA_TOOL_OPTIONS", "GLIBC_TUNABLES", "PS4", "SHELLOPTS", "BASHOPTS",
      // Libraries the GPU runtimes and collectives load by name.
      "HSA_TOOLS_LIB", "CUDA_INJECTION64_PATH", "NCCL_NET", "TORCH_EXTENSIONS_DIR", "TORCHINDUCTOR_CACHE_DIR",
      "TRITON_CACHE_DIR"};
  if (kNames.count(variable)) return true;
  for (const char* prefix : {"LD_", "DYLD_", "PYTHON", "BASH_FUNC_"}) {
    if (variable.starts_with(prefix)) return true;
  }
  return variable.ends_with("_LIBRARY_PATH") || variable.ends_with("_PRELOAD") || variable.ends_with("_PLUGIN");
}

namespace {

std::string NowText(const std::map<std::string, std::string>& now, const std::string& name) {
  auto it = now.find(name);
  return it == now.end() ? "now unset" : "now " + it->second;
}

// Snapshot files that are not this user's alone: what another user could have edited.
std::vector<std::string> ForeignFiles(const ReplaySource& source) {
  std::vector<std::string> foreign;
  const std::string env_dir = source.dir.env_dir();
  std::vector<std::string> paths = {source.dir.root, source.dir.config_dir(), source.resolved_config,
                                    source.dir.metadata_file(), env_dir, env_dir + "/env.json",
                                    env_dir + "/system_info.json", source.dir.root + "/hooks"};
  // The hooks and patches a replay runs from their recorded copies.
  for (const snapshot::RecordedScript& script : source.metadata.scripts) paths.push_back(source.dir.root + "/" + script.copy);
  for (const std::string& path : paths) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) continue;
    if (info.st_uid != ::geteuid()) {
      foreign.push_back(path + " is owned by " + DescribeOwner(info.st_uid));
    } else if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
      foreign.push_back(fmt::format("{} may be written by other users (mode {:04o})", path, info.st_mode & 07777));
    }
  }
  return foreign;
}

}  // namespace

std::vector<ReplayRisk> ReplayRisks(const ReplaySource& source, const config::Value& resolved,
                                    const std::string& interpreter, const std::map<std::string, std::string>& now) {
  std::vector<ReplayRisk> risks;
  for (const std::string& file : ForeignFiles(source)) risks.push_back({file, true});
  for (const auto& [name, entry] : source.env) {
    if (!IsReplayedVariable(name) || !ChangesWhatRuns(name) || entry.value == snapshot::kRedacted) continue;
    auto it = now.find(name);
    if (it != now.end() && it->second == entry.value) continue;
    risks.push_back({fmt::format("{}={} ({}), from env/env.json", name, entry.value, NowText(now, name)), true});
  }
  if (const config::Value* env = resolved.Find("env"); env && env->IsMap()) {
    for (const auto& [name, value] : env->AsMap()) {
      std::string text = value.ScalarText();
      if (!ChangesWhatRuns(name) || text == snapshot::kRedacted) continue;
      auto it = now.find(name);
      if (it != now.end() && it->second == text) continue;
      risks.push_back(
          {fmt::format("{}={} ({}), from config/resolved.yaml env:", name, text, NowText(now, name)), true});
    }
  }
  // The interpreter the replay runs, against the one the recorded run ran
  // (a snapshot of an older primus-cli does not say: shown, not held back).
  bool said = source.system.is_object() && source.system.contains("python_interpreter") &&
              source.system["python_interpreter"].is_string();
  std::string recorded = said ? source.system["python_interpreter"].get<std::string>() : "python3";
  for (const char* key : {"python.interpreter", "python.venv", "python.conda_env"}) {
    const config::Value* value = resolved.Find(key);
    if (value == nullptr || value->IsNull() || value->ScalarText().empty()) continue;
    if (std::string_view(key) == "python.interpreter" && value->ScalarText() == "python3" && recorded == "python3") {
      continue;  // the default, as recorded
    }
    bool differs = said && interpreter != recorded;
    risks.push_back({fmt::format("{}: {}{}, from config/resolved.yaml", key, value->ScalarText(),
                                 !said     ? " (the snapshot does not say what ran)"
                                 : differs ? " (the recorded run ran " + recorded + ")"
                                           : " (as recorded)"),
                     differs});
  }
  // What a replay of a recorded launch runs before the workers: the recorded copies.
  for (const snapshot::RecordedScript& script : source.metadata.scripts) {
    risks.push_back({fmt::format("{} {}: its recorded copy {} runs before the workers", script.kind, script.path,
                                 script.copy),
                     false});
  }
  if (const config::Value* dirs = resolved.Find("hooks.dirs"); dirs && dirs->IsList()) {
    // A snapshot that recorded its launch replays the recorded copies only.
    const char* runs = source.metadata.layout ? "only the recorded copies of what ran from it run" : "its scripts run before the workers";
    for (const config::Value& dir : dirs->AsList()) {
      std::string path = JoinPath(source.dir.config_dir(), dir.ScalarText());
      Status ours = CheckPrivateDir(path, LinkPolicy::kOwnLinkOnly);
      bool foreign = PathExists(path) && !ours.ok();
      risks.push_back({fmt::format("hooks.dirs: {} ({}{}), from config/resolved.yaml", dir.ScalarText(), runs,
                                   foreign ? "; " + ours.error().message : ""),
                       foreign});
    }
  }
  return risks;
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
      {"rocm", "ROCm", false},            {"hip", "HIP", false},             {"rccl", "RCCL", false},
      {"cuda", "CUDA", false},            {"nccl", "NCCL", false},
      {"host", "host", false},            {"cpus", "CPUs", false},
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

std::vector<SystemDifference> CompareLaunch(const snapshot::RunMetadata& then, const std::optional<snapshot::GitState>& git_now,
                                           const snapshot::RunLayout& layout_now) {
  std::vector<SystemDifference> differences;
  // The code: the recorded repository's commit and uncommitted changes.
  if (then.git) {
    auto short_commit = [](const std::string& commit) { return commit.substr(0, 12); };
    std::string now_commit = git_now ? short_commit(git_now->commit) : "- (not in a git repository)";
    if (!git_now || git_now->commit != then.git->commit) {
      differences.push_back({"code: commit", short_commit(then.git->commit), now_commit, true});
    }
    auto changes = [](const snapshot::GitState& git) {
      if (!git.dirty) return std::string("none");
      return git.diff_sha256.empty() ? std::string("some (not hashed)") : "sha256 " + git.diff_sha256.substr(0, 12);
    };
    std::string then_changes = changes(*then.git), now_changes = git_now ? changes(*git_now) : "-";
    if (then_changes != now_changes) differences.push_back({"code: uncommitted", then_changes, now_changes, true});
  }
  // The entry script by its hash: a change outside git (or beside a clean checkout) shows too.
  if (!then.code_files.empty()) {
    const snapshot::RecordedFile& entry = then.code_files.front();
    auto now = snapshot::FileSha256(entry.path);
    std::string now_text = now.ok() ? "sha256 " + now->substr(0, 12) : "- (not there)";
    if (!now.ok() || *now != entry.sha256) {
      differences.push_back({"code: " + Split(entry.path, '/').back(), "sha256 " + entry.sha256.substr(0, 12), now_text, true});
    }
  }
  if (then.layout) {
    const snapshot::RunLayout& was = *then.layout;
    auto row = [&](const char* what, int a, int b) {
      if (a != b) differences.push_back({what, std::to_string(a), std::to_string(b), true});
    };
    row("layout: nodes", was.nnodes, layout_now.nnodes);
    row("layout: per node", was.nproc_per_node, layout_now.nproc_per_node);
    row("layout: world size", was.world_size, layout_now.world_size);
  }
  return differences;
}

std::string FormatDifferences(const std::vector<SystemDifference>& differences) {
  if (differences.empty()) return "  (no differences: same code, layout, GPUs, versions and host)\n";
  std::string out = fmt::format("  {:<18} {:<28} {:<28}\n", "", "then", "now");
  for (const auto& d : differences) {
    out += fmt::format("  {:<18} {:<28} {:<28}{}\n", d.what, d.then, d.now, d.incompatible ? "  INCOMPATIBLE" : "");
  }
  return out;
}

}  // namespace primus::train
