#include "snapshot/metadata.h"

#include <sys/time.h>

#include "util/clock.h"
#include "util/files.h"
#include "util/sha256.h"
#include "util/json_fields.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::snapshot {

std::optional<GitState> DetectGit(const std::string& dir) {
  if (FindExecutable("git").empty()) return std::nullopt;
  CommandOptions options;
  options.cwd = dir;
  options.timeout_s = 5;
  auto toplevel = RunCommand({"git", "rev-parse", "--show-toplevel", "HEAD"}, options);
  if (!toplevel.ok() || toplevel->exit_code != 0) return std::nullopt;
  std::vector<std::string> lines = Split(std::string(Trim(toplevel->out)), '\n');
  if (lines.size() < 2) return std::nullopt;
  GitState state;
  state.toplevel = std::string(Trim(lines[0]));
  state.commit = std::string(Trim(lines[1]));
  auto status = RunCommand({"git", "status", "--porcelain", "--untracked-files=no"}, options);
  state.dirty = status.ok() && status->exit_code == 0 && !Trim(status->out).empty();
  if (state.dirty) {
    // Its hash over at most 16 MiB (the capture's bound): a change beyond that is not seen.
    options.capture_limit = 16 << 20;
    auto diff = RunCommand({"git", "diff", "HEAD", "--no-color", "--no-ext-diff"}, options);
    if (diff.ok() && diff->exit_code == 0) {
      state.diff_sha256 = DigestHex(Sha256(diff->out));
      state.diff_cut = diff->out.size() > kMaxDiffBytes;
      state.diff = diff->out.substr(0, kMaxDiffBytes);
    }
  }
  return state;
}

std::string IsoTimeUtc(double epoch_seconds) {
  time_t seconds = static_cast<time_t>(epoch_seconds);
  tm utc;
  gmtime_r(&seconds, &utc);
  char stamp[40];
  strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

nlohmann::ordered_json MetadataToJson(const RunMetadata& metadata, const Redactor& redactor) {
  nlohmann::ordered_json json;
  json["primus_version"] = metadata.primus_version;
  json["argv"] = metadata.argv;
  json["cwd"] = metadata.cwd;
  if (metadata.git) {
    json["git"] = {{"toplevel", metadata.git->toplevel}, {"commit", metadata.git->commit}, {"dirty", metadata.git->dirty}};
    if (!metadata.git->diff_sha256.empty()) json["git"]["diff_sha256"] = metadata.git->diff_sha256;
  } else {
    json["git"] = nullptr;
  }
  json["task"] = metadata.task;
  json["hosts"] = metadata.hosts;
  json["start_time"] = metadata.start_time;
  json["end_time"] = metadata.end_time.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(metadata.end_time);
  json["status"] = metadata.status;
  json["exit_code"] = metadata.exit_code;
  json["restarts"] = metadata.restarts;
  json["root_cause"] = metadata.root_cause;
  if (metadata.failures.is_array() && !metadata.failures.empty()) json["failures"] = metadata.failures;
  if (metadata.excluded_nodes.is_array() && !metadata.excluded_nodes.empty()) json["excluded_nodes"] = metadata.excluded_nodes;
  json["replay_of"] = metadata.replay_of.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(metadata.replay_of);
  json["log_dir"] = metadata.log_dir;
  if (metadata.layout || !metadata.worker_argv.empty()) {
    nlohmann::ordered_json launch = {{"backend_args", metadata.backend_args},
                                     {"hook_args", metadata.hook_args},
                                     {"worker_argv", metadata.worker_argv}};
    if (metadata.layout) {
      launch["layout"] = {{"nnodes", metadata.layout->nnodes},
                          {"nproc_per_node", metadata.layout->nproc_per_node},
                          {"world_size", metadata.layout->world_size}};
    }
    nlohmann::ordered_json scripts = nlohmann::ordered_json::array();
    for (const RecordedScript& script : metadata.scripts) {
      nlohmann::ordered_json env = nlohmann::ordered_json::object();
      for (const auto& [name, value] : script.env) env[name] = redactor.Value(name, value);
      scripts.push_back({{"kind", script.kind}, {"path", script.path}, {"copy", script.copy}, {"sha256", script.sha256},
                         {"skipped", script.skipped}, {"env", std::move(env)}, {"extra_args", script.extra_args}});
    }
    launch["scripts"] = std::move(scripts);
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const RecordedFile& file : metadata.code_files) files.push_back({{"path", file.path}, {"sha256", file.sha256}});
    launch["code_files"] = std::move(files);
    json["launch"] = std::move(launch);
  }
  if (metadata.launcher) json["launcher"] = StampToJson(*metadata.launcher);
  // Every string (root-cause messages quote worker output), redacted as data:
  // the document stays valid JSON whatever a message holds.
  return redactor.Json(json);
}

Result<RunMetadata> MetadataFromJson(const nlohmann::json& json) {
  using json_fields::Text;
  if (!json.is_object()) return ConfigError("metadata.json is not a JSON object");
  auto strings_in = [](const nlohmann::json& object, const char* key) {
    std::vector<std::string> out;
    for (const auto& item : json_fields::Array(object, key)) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
    return out;
  };
  auto strings = [&](const char* key) { return strings_in(json, key); };
  RunMetadata metadata;
  metadata.primus_version = Text(json, "primus_version");
  metadata.argv = strings("argv");
  metadata.cwd = Text(json, "cwd");
  if (const auto& git = json_fields::Object(json, "git"); !git.empty()) {
    metadata.git = GitState{};
    metadata.git->toplevel = Text(git, "toplevel");
    metadata.git->commit = Text(git, "commit");
    metadata.git->dirty = json_fields::Bool(git, "dirty").value_or(false);
    metadata.git->diff_sha256 = Text(git, "diff_sha256");
  }
  metadata.task = Text(json, "task");
  metadata.hosts = strings("hosts");
  metadata.start_time = Text(json, "start_time");
  metadata.end_time = Text(json, "end_time");
  metadata.status = Text(json, "status");
  metadata.exit_code = json_fields::SmallInteger(json, "exit_code").value_or(-1);
  metadata.restarts = json_fields::IntegerIn(json, "restarts", 0, INT32_MAX).value_or(0);
  if (json.contains("root_cause") && (json["root_cause"].is_object() || json["root_cause"].is_null())) {
    metadata.root_cause = json["root_cause"];
  }
  if (json.contains("failures") && json["failures"].is_array()) {
    for (const auto& failure : json["failures"]) {
      if (failure.is_object() && metadata.failures.size() < 1024) metadata.failures.push_back(nlohmann::ordered_json::parse(failure.dump()));
    }
  }
  if (json.contains("excluded_nodes") && json["excluded_nodes"].is_array()) {
    for (const auto& node : json["excluded_nodes"]) {
      if (node.is_object() && metadata.excluded_nodes.size() < 1024) {
        metadata.excluded_nodes.push_back({{"host", Text(node, "host")}, {"reason", Text(node, "reason")}});
      }
    }
  }
  metadata.replay_of = Text(json, "replay_of");
  metadata.log_dir = Text(json, "log_dir");
  if (const auto& launch = json_fields::Object(json, "launch"); !launch.empty()) {
    metadata.backend_args = strings_in(launch, "backend_args");
    metadata.hook_args = strings_in(launch, "hook_args");
    metadata.worker_argv = strings_in(launch, "worker_argv");
    for (const auto& entry : json_fields::Array(launch, "scripts")) {
      RecordedScript script;
      script.kind = Text(entry, "kind");
      script.path = Text(entry, "path");
      script.copy = Text(entry, "copy");
      script.sha256 = Text(entry, "sha256");
      script.skipped = json_fields::Bool(entry, "skipped").value_or(false);
      for (const auto& [name, value] : json_fields::Object(entry, "env").items()) {
        if (value.is_string()) script.env[name] = value.get<std::string>();
      }
      script.extra_args = strings_in(entry, "extra_args");
      if ((script.kind == "hook" || script.kind == "patch") && !script.copy.empty()) metadata.scripts.push_back(script);
    }
    for (const auto& entry : json_fields::Array(launch, "code_files")) {
      if (!Text(entry, "path").empty()) metadata.code_files.push_back({Text(entry, "path"), Text(entry, "sha256")});
    }
    if (const auto& layout = json_fields::Object(launch, "layout"); !layout.empty()) {
      metadata.layout = RunLayout{json_fields::IntegerIn(layout, "nnodes", 0, 1 << 20).value_or(0),
                                  json_fields::IntegerIn(layout, "nproc_per_node", 0, 1 << 20).value_or(0),
                                  json_fields::IntegerIn(layout, "world_size", 0, 1 << 30).value_or(0)};
    }
  }
  metadata.launcher = StampFromJson(json_fields::Object(json, "launcher"));
  return metadata;
}

std::string StatusNow(const RunMetadata& metadata) {
  if (metadata.status != "running" || !metadata.launcher) return metadata.status;
  return CheckAlive(*metadata.launcher) == Liveness::kGone ? kEndedWithoutRecord : metadata.status;
}

Status WriteJsonFile(const std::string& path, const nlohmann::ordered_json& json) {
  return WriteFileAtomic(path, json.dump(2) + "\n");
}

Status WriteMetadata(const std::string& path, const RunMetadata& metadata, const Redactor& redactor) {
  return WriteJsonFile(path, MetadataToJson(metadata, redactor));
}

Result<RunMetadata> ReadMetadata(const std::string& path) {
  auto text = ReadRegularFile(path, 16 << 20);
  if (!text.ok()) return text.error();
  std::optional<nlohmann::json> json = json_fields::Parse(*text);
  if (!json) {
    return ConfigError(path + ": not valid JSON", "is this an experiment directory written by primus-cli?");
  }
  auto metadata = MetadataFromJson(*json);
  if (!metadata.ok()) return ConfigError(path + ": " + metadata.error().message);
  return metadata;
}

}  // namespace primus::snapshot
