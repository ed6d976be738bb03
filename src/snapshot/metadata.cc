#include "snapshot/metadata.h"

#include <sys/time.h>

#include "util/clock.h"
#include "util/files.h"
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
  GitState state{std::string(Trim(lines[0])), std::string(Trim(lines[1])), false};
  auto status = RunCommand({"git", "status", "--porcelain", "--untracked-files=no"}, options);
  state.dirty = status.ok() && status->exit_code == 0 && !Trim(status->out).empty();
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
  json["replay_of"] = metadata.replay_of.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(metadata.replay_of);
  json["log_dir"] = metadata.log_dir;
  if (metadata.launcher) json["launcher"] = StampToJson(*metadata.launcher);
  // Every string (root-cause messages quote worker output), redacted as data:
  // the document stays valid JSON whatever a message holds.
  return redactor.Json(json);
}

Result<RunMetadata> MetadataFromJson(const nlohmann::json& json) {
  using json_fields::Text;
  if (!json.is_object()) return ConfigError("metadata.json is not a JSON object");
  auto strings = [&](const char* key) {
    std::vector<std::string> out;
    for (const auto& item : json_fields::Array(json, key)) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
    return out;
  };
  RunMetadata metadata;
  metadata.primus_version = Text(json, "primus_version");
  metadata.argv = strings("argv");
  metadata.cwd = Text(json, "cwd");
  if (const auto& git = json_fields::Object(json, "git"); !git.empty()) {
    metadata.git = GitState{Text(git, "toplevel"), Text(git, "commit"), json_fields::Bool(git, "dirty").value_or(false)};
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
  metadata.replay_of = Text(json, "replay_of");
  metadata.log_dir = Text(json, "log_dir");
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
