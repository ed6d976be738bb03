#include "analyze/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <re2/re2.h>

#include "analyze/log_line.h"
#include "config/launcher_schema.h"
#include "config/yaml_parser.h"
#include "telemetry/node_sample.h"
#include "util/json_fields.h"
#include "analyze/run_files.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::analyze {
namespace {

namespace fs = std::filesystem;

// Each rank's step_time_s and time parts over all attempts (docs/monitor.md's
// worker lines). A record that repeats the step of the one before it (the
// agent's second record of a Megatron-LM step, carrying its timers) replaces it.
void ReadRankMetrics(const std::vector<std::pair<int, fs::path>>& attempts, RunReport* report) {
  static const RE2 metrics_name(R"((.+)\.rank(\d+)\.metrics\.jsonl)");
  std::map<int, RankStepTimes> ranks;
  for (const auto& [attempt, dir] : attempts) {
    for (const fs::path& file : FilesIn(dir)) {
      std::string host;
      int rank = 0;
      if (!RE2::FullMatch(file.filename().string(), metrics_name, &host, &rank)) continue;
      std::vector<telemetry::TrainingMetrics> records;
      std::ifstream in(file);
      std::string line;
      while (std::getline(in, line)) {
        std::optional<telemetry::TrainingMetrics> record = telemetry::ParseMetricsLine(line);
        if (!record) continue;  // a torn last line, or not ours
        if (!records.empty() && record->step && records.back().step == record->step) {
          records.back() = std::move(*record);
        } else {
          records.push_back(std::move(*record));
        }
      }
      RankStepTimes& times = ranks[rank];
      times.rank = rank;
      times.host = host;
      for (const telemetry::TrainingMetrics& record : records) {
        if (record.step_time_s && *record.step_time_s >= 0) times.step_time_s.push_back(*record.step_time_s);
        std::optional<telemetry::StepTimeBreakdown> parts = telemetry::BreakDownStepTime(record);
        if (parts && record.step) times.parts.push_back({attempt, *record.step, std::move(*parts)});
      }
    }
  }
  for (auto& [rank, times] : ranks) {
    if (!times.step_time_s.empty() || !times.parts.empty()) report->ranks.push_back(std::move(times));
  }
}

// logs/telemetry/history.jsonl: each node's CPU and GPU utilization over time.
void ReadHistory(const std::string& path, RunReport* report) {
  std::ifstream in(path);
  if (!in) return;
  std::map<int, NodeHistory> nodes;
  std::string line;
  size_t unreadable = 0;
  while (std::getline(in, line)) {
    auto record = json_fields::Parse(line).value_or(nlohmann::json());
    if (!record.is_object() || !record["time"].is_number() || !record["nodes"].is_array()) {
      if (!Trim(line).empty()) ++unreadable;
      continue;
    }
    double time = record["time"];
    for (const auto& node : record["nodes"]) {
      if (!node.is_object() || !node["node_rank"].is_number_integer()) continue;
      NodeHistory& history = nodes[node["node_rank"].get<int>()];
      history.node_rank = node["node_rank"];
      if (node["host"].is_string()) history.host = node["host"];
      if (node["cpu_percent"].is_number()) history.cpu_percent.emplace_back(time, node["cpu_percent"].get<double>());
      const auto& gpus = node["gpu_utilization_percent"];
      if (!gpus.is_array()) continue;
      if (history.gpu_utilization.size() < gpus.size()) history.gpu_utilization.resize(gpus.size());
      for (size_t gpu = 0; gpu < gpus.size(); ++gpu) {
        if (gpus[gpu].is_number()) history.gpu_utilization[gpu].emplace_back(time, gpus[gpu].get<double>());
      }
    }
  }
  if (unreadable > 0) report->notes.push_back(fmt::format("{}: {} line(s) that are not history records were skipped", path, unreadable));
  for (auto& [rank, history] : nodes) report->nodes.push_back(std::move(history));
}

// The first stamped line of a file (a rank log's first line says when the worker started).
double FirstStamp(const fs::path& file, LogLineParser* parser) {
  std::ifstream in(file);
  std::string raw;
  for (int lines = 0; lines < 20 && std::getline(in, raw); ++lines) {
    double time = parser->Parse(raw).time;
    if (time > 0) return time;
  }
  return 0;
}

std::string ErrorFileMessage(const fs::path& file) {
  auto text = ReadRegularFile(file.string(), 1 << 20);
  if (!text.ok()) return "";
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return "";
  const auto& message = json["message"];
  if (message.is_string()) return message;
  if (message.is_object() && message["message"].is_string()) return message["message"];
  return "";
}

void ReadAttempts(const std::vector<std::pair<int, fs::path>>& attempts, RunReport* report) {
  static const RE2 endings_name(R"((.+)\.endings\.log)");
  static const RE2 rank_log_name(R"(.+\.rank\d+\.log)");
  static const RE2 error_name(R"((.+)\.rank(\d+)\.error\.json)");
  LogLineParser parser;
  for (const auto& [number, dir] : attempts) {
    AttemptRecord attempt;
    attempt.attempt = number;
    std::map<std::pair<std::string, int>, std::string> errors;  // (host, rank) -> message
    for (const fs::path& file : FilesIn(dir)) {
      std::string name = file.filename().string(), host;
      int rank = 0;
      if (RE2::FullMatch(name, error_name, &host, &rank)) errors[{host, rank}] = ErrorFileMessage(file);
      if (RE2::FullMatch(name, rank_log_name)) {
        double started = FirstStamp(file, &parser);
        if (started > 0 && (attempt.start == 0 || started < attempt.start)) attempt.start = started;
      }
    }
    for (const fs::path& file : FilesIn(dir)) {
      std::string host;
      if (!RE2::FullMatch(file.filename().string(), endings_name, &host)) continue;
      std::ifstream in(file);
      std::string raw;
      while (std::getline(in, raw)) {
        if (Trim(raw).empty()) continue;
        LogLine parsed = parser.Parse(raw);
        EndingLine ending;
        ending.host = host;
        ending.rank = parsed.rank;
        ending.time = parsed.time;
        ending.text = std::string(parsed.text);
        // "<stamp> E rank 1: ..." is an error line; "O" a clean exit or a stop by the agent.
        size_t space = raw.find(' ');
        ending.failure = space != std::string::npos && raw.compare(space, 3, " E ") == 0;
        auto error = errors.find({host, parsed.rank});
        if (error != errors.end()) ending.error_message = error->second;
        if (ending.time > attempt.end) attempt.end = ending.time;
        attempt.endings.push_back(std::move(ending));
      }
    }
    std::sort(attempt.endings.begin(), attempt.endings.end(),
              [](const EndingLine& a, const EndingLine& b) { return a.time < b.time; });
    if (attempt.start == 0 && !attempt.endings.empty()) attempt.start = attempt.endings.front().time;
    report->attempts.push_back(std::move(attempt));
  }
}

std::string LeafText(const config::Value& value) {
  if (value.IsScalar()) return value.IsNull() ? "null" : value.ScalarText();
  if (value.IsList()) {
    std::vector<std::string> items;
    for (const config::Value& item : value.AsList()) items.push_back(LeafText(item));
    return "[" + Join(items, ", ") + "]";
  }
  if (value.AsMap().empty()) return "{}";
  std::vector<std::string> items;
  for (const auto& [key, item] : value.AsMap()) items.push_back(key + ": " + LeafText(item));
  return "{" + Join(items, ", ") + "}";
}

// "a.b.c" -> the leaf's text; maps are walked, lists and empty maps are leaves.
void Flatten(const config::Value& value, const std::string& prefix, std::vector<std::pair<std::string, std::string>>* out) {
  if (value.IsMap() && !value.AsMap().empty()) {
    for (const auto& [key, item] : value.AsMap()) Flatten(item, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  out->emplace_back(prefix, LeafText(value));
}

Result<std::vector<std::pair<std::string, std::string>>> FlattenFile(const std::string& path) {
  auto text = ReadRegularFile(path, 16 << 20);
  if (!text.ok()) return text.error();
  auto value = config::ParseYaml(*text, {.source = path});
  if (!value.ok()) return value.error();
  std::vector<std::pair<std::string, std::string>> leaves;
  Flatten(*value, "", &leaves);
  return leaves;
}

// Two renderings of one setting: equal as text, or as numbers (900 and 900.0).
bool SameValue(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::optional<double> x = ParseDouble(a), y = ParseDouble(b);
  return x && y && *x == *y;
}

// resolved.yaml's leaves, each with where its value came from: a `key=value`
// of the command line, the experiment file, a file it extends, or a default;
// and where a launcher setting overrode an experiment key, what ran.
void ReadConfig(const std::string& dir, RunReport* report) {
  std::string config_dir = JoinPath(dir, "config"), resolved_path = JoinPath(config_dir, "resolved.yaml");
  if (!PathExists(resolved_path)) return;
  auto resolved = FlattenFile(resolved_path);
  if (!resolved.ok()) {
    report->notes.push_back(resolved.error().message);
    return;
  }
  // The command line: the experiment file after --config, and key=value overrides.
  static const RE2 override_arg(R"(([A-Za-z_][A-Za-z0-9_.-]*)=(.*))");
  std::string experiment_file;
  std::map<std::string, std::string> overrides;
  const auto& argv = report->metadata["argv"];
  for (size_t i = 0; argv.is_array() && i < argv.size(); ++i) {
    if (!argv[i].is_string()) continue;
    std::string arg = argv[i], key, value;
    if (arg == "--config" && i + 1 < argv.size() && argv[i + 1].is_string()) {
      experiment_file = fs::path(argv[i + 1].get<std::string>()).filename().string();
    } else if (arg.starts_with("--config=")) {
      experiment_file = fs::path(arg.substr(9)).filename().string();
    } else if (RE2::FullMatch(arg, override_arg, &key, &value)) {
      overrides[key] = arg;
    }
  }
  // The copied files of the extends chain, the experiment file first.
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> files;
  for (const fs::path& file : FilesIn(config_dir)) {
    std::string name = file.filename().string();
    if (name == "resolved.yaml" || !(name.ends_with(".yaml") || name.ends_with(".yml"))) continue;
    auto leaves = FlattenFile(file.string());
    if (!leaves.ok()) continue;  // a Primus-format or templated file: its keys are simply not attributed
    files.emplace_back("config/" + name, std::map<std::string, std::string>(leaves->begin(), leaves->end()));
  }
  std::stable_partition(files.begin(), files.end(),
                        [&](const auto& file) { return file.first == "config/" + experiment_file; });
  for (const auto& [key, value] : *resolved) {
    OriginEntry entry{key, value, "default"};
    if (auto override_arg = overrides.find(key); override_arg != overrides.end()) {
      entry.origin = "command line " + override_arg->second;
    } else {
      for (const auto& [file, leaves] : files) {
        auto leaf = leaves.find(key);
        if (leaf == leaves.end()) continue;
        entry.origin = leaf->second == value ? file : file + " (then a variant, a launcher flag or a derived value)";
        break;
      }
    }
    report->config.push_back(std::move(entry));
  }
  // The launch settings a flag, a variable or --set gave instead of the
  // experiment's: what ran is said beside the file's value.
  std::map<std::string, const OriginEntry*> launcher;
  for (const OriginEntry& setting : report->launcher) launcher[setting.name] = &setting;
  for (OriginEntry& entry : report->config) {
    for (const auto& [experiment_key, launcher_key] : config::ExperimentLaunchKeys()) {
      auto ran = launcher.find(launcher_key);
      if (entry.name != experiment_key || ran == launcher.end() || SameValue(ran->second->value, entry.value)) continue;
      entry.origin += "; the launch ran with " + launcher_key + " " + ran->second->value + " (" + ran->second->origin + ")";
    }
  }
}

void ReadEnvironmentFile(const std::string& dir, RunReport* report) {
  std::string path = JoinPath(dir, "env/env.json");
  if (!PathExists(path)) return;
  auto text = ReadRegularFile(path, 64 << 20);
  auto json = text.ok() ? json_fields::Parse(*text).value_or(nlohmann::json()) : nlohmann::json();
  if (!json.is_object()) {
    report->notes.push_back(path + ": not a JSON object of variables");
    return;
  }
  for (const auto& [name, entry] : json.items()) {
    if (!entry.is_object() || !entry["value"].is_string()) continue;
    report->environment.push_back({name, entry["value"], entry["origin"].is_string() ? entry["origin"].get<std::string>() : ""});
  }
}

}  // namespace

Result<RunReport> LoadRunReport(const std::string& dir) {
  auto summary = LoadRunSummary(dir);
  if (!summary.ok()) return summary.error();
  RunReport report;
  report.summary = std::move(*summary);
  auto metadata = ReadFile(JoinPath(dir, "metadata.json"));
  // Checked by the safe reader first (depth, size), then kept in its own order.
  if (metadata.ok() && json_fields::Parse(*metadata)) {
    report.metadata = nlohmann::ordered_json::parse(*metadata, nullptr, false);
  }
  if (!report.metadata.is_object()) report.metadata = nlohmann::ordered_json::object();

  std::string logs = report.summary.log_dir;
  auto attempts = AttemptDirs(logs);
  ReadRankMetrics(attempts, &report);
  ReadHistory(JoinPath(logs, "telemetry/history.jsonl"), &report);
  ReadAttempts(attempts, &report);
  for (const LaunchSetting& setting : ReadLaunchSettings(dir)) {
    report.launcher.push_back({setting.key, setting.value, setting.origin});
  }
  ReadConfig(dir, &report);
  ReadEnvironmentFile(dir, &report);
  return report;
}

}  // namespace primus::analyze
