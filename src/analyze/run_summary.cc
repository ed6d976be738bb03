#include "analyze/run_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>

#include "analyze/log_line.h"
#include "analyze/log_scan.h"
#include "analyze/signature_db.h"
#include "util/svg_chart.h"
#include "snapshot/metadata.h"
#include "telemetry/node_sample.h"
#include "telemetry/progress_line.h"
#include "util/files.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace primus::analyze {
namespace {

// "2026-11-24T09:19:27Z" -> seconds since the epoch; 0 when not that shape.
double ParseUtc(const std::string& text) {
  std::tm parts{};
  if (strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &parts) == nullptr) return 0;
  return static_cast<double>(timegm(&parts));
}

std::vector<RunPoint> ReadMetrics(const std::string& path) {
  std::vector<RunPoint> points;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::optional<telemetry::TrainingMetrics> record = telemetry::ParseMetricsLine(line);
    if (!record || !record->step || !record->loss) continue;  // not a step's line, or a damaged one
    RunPoint point;
    point.step = *record->step;
    point.loss = *record->loss;
    point.time = record->time.value_or(0.0);
    point.tokens_per_s = record->tokens_per_s.value_or(0.0);
    point.attempt = record->restart_count.value_or(0);
    points.push_back(point);
  }
  return points;
}

// A rank's log read for progress lines: our trainer's "step 10/200 loss
// 4.5191 ... tok/s 33367", or any framework's (telemetry/progress_line.h).
std::vector<RunPoint> ReadRankLog(const std::string& path, int attempt) {
  auto reader = telemetry::ProgressLineReader::Create(telemetry::ProgressFormat::kAuto);
  std::vector<RunPoint> points;
  if (!reader.ok()) return points;
  std::ifstream in(path);
  std::string raw;
  LogLineParser parser;
  while (std::getline(in, raw)) {
    LogLine line = parser.Parse(raw);
    std::optional<telemetry::TrainingMetrics> metrics = reader->Read(line.text);
    if (!metrics || !metrics->step || !metrics->loss) continue;
    points.push_back({line.time, *metrics->step, *metrics->loss, metrics->tokens_per_s.value_or(0), attempt});
  }
  return points;
}

void Derive(RunSummary* summary) {
  const auto& points = summary->points;
  if (points.empty()) return;
  summary->loss_first = points.front().loss;
  summary->loss_last = points.back().loss;
  summary->step_last = points.back().step;
  summary->loss_min = points.front().loss;
  double rate_sum = 0;
  int rates = 0;
  double progress_steps = 0, progress_seconds = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    summary->loss_min = std::min(summary->loss_min, points[i].loss);
    if (points[i].tokens_per_s > 0) rate_sum += points[i].tokens_per_s, ++rates;
    if (i > 0 && points[i].step > points[i - 1].step && points[i].time > points[i - 1].time && points[i - 1].time > 0) {
      progress_steps += static_cast<double>(points[i].step - points[i - 1].step);
      progress_seconds += points[i].time - points[i - 1].time;
    }
  }
  if (rates > 0) summary->tokens_per_s = rate_sum / rates;
  if (progress_seconds > 0) summary->steps_per_s = progress_steps / progress_seconds;
}

}  // namespace

std::vector<LaunchSetting> ReadLaunchSettings(const std::string& dir, const std::vector<std::string>& keys) {
  std::vector<LaunchSetting> settings;
  auto text = ReadRegularFile(JoinPath(dir, "config/launcher.json"), 4 << 20);
  if (!text.ok()) return settings;
  std::optional<nlohmann::json> json = json_fields::Parse(*text);
  if (!json || !json->is_object()) return settings;
  const nlohmann::json& config = json_fields::Object(*json, "config");
  const nlohmann::json& origins = json_fields::Object(*json, "origins");
  // "direct.max_restarts" -> its value in config, as text (a scalar; lists joined).
  auto value_of = [&](const std::string& key) -> std::optional<std::string> {
    const nlohmann::json* at = &config;
    for (const std::string& part : Split(key, '.')) {
      if (!at->is_object() || !at->contains(part)) return std::nullopt;
      at = &(*at)[part];
    }
    if (at->is_string()) return at->get<std::string>().substr(0, 1000);
    if (at->is_object()) return std::nullopt;
    if (at->is_number_float()) return fmt::format("{:g}", at->get<double>());
    return at->dump().substr(0, 1000);
  };
  std::vector<std::string> wanted = keys;
  if (wanted.empty()) {
    for (const auto& [key, origin] : origins.items()) wanted.push_back(key);
    std::sort(wanted.begin(), wanted.end());
    if (wanted.size() > 10000) wanted.resize(10000);
  }
  for (const std::string& key : wanted) {
    std::optional<std::string> value = value_of(key);
    if (!value) continue;
    settings.push_back({key, *value, json_fields::Text(origins, key.c_str(), "default").substr(0, 1000)});
  }
  return settings;
}

Result<RunSummary> LoadRunSummary(const std::string& dir) {
  std::string metadata_path = JoinPath(dir, "metadata.json");
  if (!PathExists(metadata_path)) {
    return UnavailableError(metadata_path + ": no such file",
                            "name an experiment directory written by `train` (output/<exp>_<time>)");
  }
  auto metadata = snapshot::ReadMetadata(metadata_path);
  if (!metadata.ok()) {
    return UnavailableError(metadata.error().message, "the file is damaged; the logs are still readable with "
                                                      "`analyze logs " + dir + "`");
  }
  RunSummary summary;
  summary.dir = dir;
  summary.task = metadata->task;
  // "running" whose launcher is gone reads as ended without a record.
  summary.status = snapshot::StatusNow(*metadata);
  summary.exit_code = std::max(0, metadata->exit_code);
  summary.restarts = metadata->restarts;
  summary.start_time = metadata->start_time;
  summary.end_time = metadata->end_time;
  double start = ParseUtc(summary.start_time), end = ParseUtc(summary.end_time);
  summary.start_s = start;
  if (start > 0 && end >= start) summary.duration_s = end - start;
  summary.root_cause = metadata->root_cause;
  for (const auto& recorded : metadata->failures) {
    nlohmann::json cause = recorded;
    AttemptFailure failure;
    failure.attempt = json_fields::SmallInteger(cause, "attempt").value_or(0);
    failure.cause = recorded;
    if (auto signature = StrongestSignature(Split(json_fields::Text(cause, "message"), '\n'))) {
      failure.signature = signature->id;
      failure.meaning = signature->meaning;
    }
    summary.failures.push_back(std::move(failure));
  }
  // Each failure but the last was followed by a restart; the last too unless
  // it is what the run ended with (its root cause).
  nlohmann::json root = summary.root_cause;
  int ended_with = root.is_object() ? json_fields::SmallInteger(root, "attempt").value_or(-1) : -1;
  for (size_t i = 0; i < summary.failures.size(); ++i) {
    bool last = i + 1 == summary.failures.size();
    summary.failures[i].restarted = !last || summary.failures[i].attempt != ended_with;
  }
  summary.launch_settings = ReadLaunchSettings(
      dir, {"direct.nnodes", "direct.nproc_per_node", "direct.max_restarts", "direct.hang_timeout"});
  summary.log_dir = IsDirectory(metadata->log_dir) ? metadata->log_dir : JoinPath(dir, "logs");

  std::string metrics = JoinPath(dir, "metrics.jsonl");
  if (PathExists(metrics)) {
    summary.points = ReadMetrics(metrics);
    summary.metrics_source = "metrics.jsonl";
  }
  if (summary.points.empty()) {
    // The logs, attempt by attempt: the rank that printed the most progress
    // lines. Rank 0 (most trainers) and the highest rank (Megatron-LM's
    // last rank) are read; the others only when both printed none, so a
    // thousand-rank run does not mean reading a thousand logs.
    auto sources = FindLogSources({summary.log_dir});
    if (sources.ok()) {
      auto attempt_of = [](const LogSource& source) { return std::max(0, source.attempt); };
      std::map<int, int> highest_rank;  // attempt -> its highest rank
      for (const LogSource& source : *sources) {
        highest_rank[attempt_of(source)] = std::max(highest_rank[attempt_of(source)], source.rank);
      }
      auto read_first = [&](const LogSource& source) {
        return source.rank == 0 || source.rank == highest_rank[attempt_of(source)];
      };
      std::map<int, std::pair<const LogSource*, std::vector<RunPoint>>> best;  // attempt -> rank's log, points
      auto consider = [&](const LogSource& source) {
        std::vector<RunPoint> points = ReadRankLog(source.path, attempt_of(source));
        auto& [chosen, chosen_points] = best[attempt_of(source)];
        if (points.size() > chosen_points.size() ||
            (chosen != nullptr && points.size() == chosen_points.size() && source.rank < chosen->rank)) {
          chosen = &source;
          chosen_points = std::move(points);
        }
      };
      for (const LogSource& source : *sources) {
        if (read_first(source)) consider(source);
      }
      for (const LogSource& source : *sources) {
        if (!read_first(source) && best[attempt_of(source)].second.empty()) consider(source);
      }
      for (auto& [attempt, entry] : best) {
        auto& [source, points] = entry;
        if (points.empty()) continue;
        summary.points.insert(summary.points.end(), points.begin(), points.end());
        std::string shown = summary.log_dir.starts_with(dir + "/") ? summary.log_dir.substr(dir.size() + 1)
                                                                   : summary.log_dir;
        summary.metrics_source = JoinPath(shown, source->display);
      }
    }
  }
  Derive(&summary);
  return summary;
}

std::string DescribeRootCause(const nlohmann::ordered_json& cause) {
  // metadata.json as read from disk: any field may be missing or odd.
  nlohmann::json json = cause;
  if (!json.is_object()) return "none";
  if (json.contains("launcher_error")) return json_fields::Text(json, "launcher_error", "?");
  int signal = json_fields::SmallInteger(json, "signal").value_or(0);
  std::string ending = signal != 0 ? fmt::format("signal {}", signal)
                                   : fmt::format("exit code {}", json_fields::SmallInteger(json, "exit_code").value_or(0));
  std::string message = json_fields::Text(json, "message");
  return fmt::format("rank {} on {} ({}{}){}", json_fields::SmallInteger(json, "rank").value_or(-1),
                     json_fields::Text(json, "host", "?"), json_fields::Bool(json, "hung").value_or(false) ? "hung, " : "",
                     ending, message.empty() ? "" : ": " + message);
}

std::string DescribeRunRootCause(const RunSummary& s) {
  if (s.root_cause.is_object() || s.failures.empty()) return DescribeRootCause(s.root_cause);
  if (s.status == "succeeded") return fmt::format("none: the run recovered from {} failure(s)", s.failures.size());
  return fmt::format("none recorded for its end ({}); {} earlier failure(s) restarted", s.status, s.failures.size());
}

std::string DescribeAttemptFailure(const AttemptFailure& failure) {
  return fmt::format("attempt {}: {}{}; {}", failure.attempt, DescribeRootCause(failure.cause),
                     failure.signature.empty() ? "" : " [" + failure.signature + ": " + failure.meaning + "]",
                     failure.restarted ? "restarted" : "the run ended");
}

std::string FormatMeasure(double value) { return fmt::format("{:.4g}", value); }

std::string FormatRunSummary(const RunSummary& s) {
  std::string out = fmt::format("run {}\n", s.dir);
  out += fmt::format("  task:       {}\n", s.task);
  out += fmt::format("  status:     {} (exit {})\n", s.status, s.exit_code);
  out += fmt::format("  started:    {}\n", s.start_time.empty() ? "-" : s.start_time);
  out += fmt::format("  duration:   {}\n", s.duration_s > 0 || !s.end_time.empty() ? fmt::format("{:g} s", s.duration_s)
                                                                                    : std::string("- (no end time)"));
  out += fmt::format("  restarts:   {}\n", s.restarts);
  for (const AttemptFailure& failure : s.failures) out += "  failed:     " + DescribeAttemptFailure(failure) + "\n";
  out += fmt::format("  root cause: {}\n", DescribeRunRootCause(s));
  if (!s.launch_settings.empty()) {
    std::vector<std::string> parts;
    for (const LaunchSetting& setting : s.launch_settings) {
      std::string name = setting.key.substr(setting.key.find('.') + 1);
      parts.push_back(fmt::format("{} {} ({})", name, setting.value, setting.origin));
    }
    out += "  launched:   " + Join(parts, ", ") + "\n";
  }
  if (s.points.empty()) return out + "  metrics:    none found (no metrics.jsonl, no progress lines in the ranks' logs)\n";
  out += fmt::format("  metrics:    {} point(s) from {}\n", s.points.size(), s.metrics_source);
  out += fmt::format("  steps:      {} (last), {} steps/s\n", s.step_last, FormatMeasure(s.steps_per_s));
  out += fmt::format("  tokens/s:   {} (mean)\n", s.tokens_per_s > 0 ? FormatMeasure(s.tokens_per_s) : "-");
  out += fmt::format("  loss:       {} -> {} (min {})\n", FormatMeasure(s.loss_first), FormatMeasure(s.loss_last),
                     FormatMeasure(s.loss_min));
  return out;
}

std::string RunSummaryJson(const RunSummary& s) {
  nlohmann::ordered_json root = {{"dir", s.dir},
                                 {"task", s.task},
                                 {"status", s.status},
                                 {"exit_code", s.exit_code},
                                 {"restarts", s.restarts},
                                 {"start_time", s.start_time},
                                 {"end_time", s.end_time},
                                 {"duration_s", s.duration_s},
                                 {"root_cause", s.root_cause},
                                 {"failures", nlohmann::ordered_json::array()},
                                 {"launch_settings", nlohmann::ordered_json::object()},
                                 {"metrics_source", s.metrics_source},
                                 {"points", s.points.size()},
                                 {"step_last", s.step_last},
                                 {"steps_per_s", s.steps_per_s},
                                 {"tokens_per_s", s.tokens_per_s},
                                 {"loss_first", s.loss_first},
                                 {"loss_last", s.loss_last},
                                 {"loss_min", s.loss_min}};
  for (const AttemptFailure& failure : s.failures) {
    root["failures"].push_back({{"attempt", failure.attempt},
                                {"cause", failure.cause},
                                {"signature", failure.signature.empty() ? nlohmann::ordered_json(nullptr)
                                                                         : nlohmann::ordered_json(failure.signature)},
                                {"restarted", failure.restarted}});
  }
  for (const LaunchSetting& setting : s.launch_settings) {
    root["launch_settings"][setting.key] = {{"value", setting.value}, {"origin", setting.origin}};
  }
  return root.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string RenderRunPlot(const RunSummary& s) {
  double t0 = 0;
  for (const RunPoint& point : s.points) {
    if (point.time > 0) {
      t0 = point.time;
      break;
    }
  }
  PlotSeries loss{"loss", {}}, rate{"tokens/s", {}};
  for (const RunPoint& point : s.points) {
    if (point.time <= 0) continue;
    loss.points.emplace_back(point.time - t0, point.loss);
    if (point.tokens_per_s > 0) rate.points.emplace_back(point.time - t0, point.tokens_per_s);
  }
  PlotSpec loss_panel{"loss: " + s.dir, "seconds since the first step", "loss", false, {loss}};
  PlotSpec rate_panel{"throughput", "seconds since the first step", "tokens/s", false, {rate}};
  return RenderSvgPanels({loss_panel, rate_panel});
}

}  // namespace primus::analyze
