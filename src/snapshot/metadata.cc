#include "snapshot/metadata.h"

#include <sys/time.h>

#include "util/files.h"
#include "util/strings.h"
#include "util/subprocess.h"

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

double NowEpochSeconds() {
  timeval now;
  gettimeofday(&now, nullptr);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_usec) / 1e6;
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
  // Every string (root-cause messages quote worker output), redacted as data:
  // the document stays valid JSON whatever a message holds.
  return redactor.Json(json);
}

Result<RunMetadata> MetadataFromJson(const nlohmann::json& json) {
  try {
    RunMetadata metadata;
    metadata.primus_version = json.value("primus_version", "");
    metadata.argv = json.value("argv", std::vector<std::string>{});
    metadata.cwd = json.value("cwd", "");
    if (json.contains("git") && json["git"].is_object()) {
      metadata.git = GitState{json["git"].value("toplevel", ""), json["git"].value("commit", ""),
                              json["git"].value("dirty", false)};
    }
    metadata.task = json.value("task", "");
    metadata.hosts = json.value("hosts", std::vector<std::string>{});
    metadata.start_time = json.value("start_time", "");
    if (json.contains("end_time") && json["end_time"].is_string()) metadata.end_time = json["end_time"];
    metadata.status = json.value("status", "");
    metadata.exit_code = json.value("exit_code", -1);
    metadata.restarts = json.value("restarts", 0);
    if (json.contains("root_cause")) metadata.root_cause = json["root_cause"];
    if (json.contains("replay_of") && json["replay_of"].is_string()) metadata.replay_of = json["replay_of"];
    metadata.log_dir = json.value("log_dir", "");
    return metadata;
  } catch (const nlohmann::json::exception& error) {
    return ConfigError(std::string("metadata.json is not in the expected shape: ") + error.what());
  }
}

Status WriteJsonFile(const std::string& path, const nlohmann::ordered_json& json) {
  return WriteFileAtomic(path, json.dump(2) + "\n");
}

Status WriteMetadata(const std::string& path, const RunMetadata& metadata, const Redactor& redactor) {
  return WriteJsonFile(path, MetadataToJson(metadata, redactor));
}

Result<RunMetadata> ReadMetadata(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) {
    return ConfigError(path + ": not valid JSON", "is this an experiment directory written by primus-cli?");
  }
  auto metadata = MetadataFromJson(json);
  if (!metadata.ok()) return ConfigError(path + ": " + metadata.error().message);
  return metadata;
}

}  // namespace primus::snapshot
