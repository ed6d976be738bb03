#include "analyze/run_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <re2/re2.h>

#include "analyze/log_line.h"
#include "analyze/log_scan.h"
#include "benchmark/svg_plot.h"
#include "util/files.h"

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
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object() || !record.contains("step") || !record.contains("loss")) continue;
    RunPoint point;
    point.step = record["step"].get<int64_t>();
    point.loss = record["loss"].get<double>();
    point.time = record.value("time", 0.0);
    point.tokens_per_s = record.value("tokens_per_s", 0.0);
    point.attempt = record.value("restart_count", 0);
    points.push_back(point);
  }
  return points;
}

// Rank 0's log lines "step 10/200 loss 4.5191 ... tok/s 33367".
std::vector<RunPoint> ReadRankLog(const std::string& path, int attempt) {
  static const RE2 step_line(R"(step (\d+)(?:/\d+)? .*?loss ([0-9.eE+-]+)(?:.*?tok/s ([0-9.]+))?)");
  std::vector<RunPoint> points;
  std::ifstream in(path);
  std::string raw;
  LogLineParser parser;
  while (std::getline(in, raw)) {
    LogLine line = parser.Parse(raw);
    int64_t step = 0;
    double loss = 0;
    std::string rate;
    if (!RE2::PartialMatch(line.text, step_line, &step, &loss, &rate)) continue;
    points.push_back({line.time, step, loss, rate.empty() ? 0 : std::stod(rate), attempt});
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

Result<RunSummary> LoadRunSummary(const std::string& dir) {
  std::string metadata_path = JoinPath(dir, "metadata.json");
  auto text = ReadFile(metadata_path);
  if (!text.ok()) {
    return EnvironmentError(metadata_path + ": " + text.error().message,
                            "name an experiment directory written by `train` (output/<exp>_<time>)");
  }
  auto metadata = nlohmann::ordered_json::parse(*text, nullptr, false);
  if (metadata.is_discarded() || !metadata.is_object()) {
    return EnvironmentError(metadata_path + ": not valid JSON", "the file is damaged; the logs are still readable "
                                                               "with `analyze logs " + dir + "`");
  }
  RunSummary summary;
  summary.dir = dir;
  summary.task = metadata.value("task", "");
  summary.status = metadata.value("status", "");
  summary.exit_code = metadata["exit_code"].is_number() ? metadata["exit_code"].get<int>() : 0;
  summary.restarts = metadata.value("restarts", 0);
  summary.start_time = metadata["start_time"].is_string() ? metadata["start_time"].get<std::string>() : "";
  summary.end_time = metadata["end_time"].is_string() ? metadata["end_time"].get<std::string>() : "";
  double start = ParseUtc(summary.start_time), end = ParseUtc(summary.end_time);
  summary.start_s = start;
  if (start > 0 && end >= start) summary.duration_s = end - start;
  summary.root_cause = metadata.contains("root_cause") ? metadata["root_cause"] : nlohmann::ordered_json(nullptr);

  std::string metrics = JoinPath(dir, "metrics.jsonl");
  if (PathExists(metrics)) {
    summary.points = ReadMetrics(metrics);
    summary.metrics_source = "metrics.jsonl";
  }
  if (summary.points.empty()) {
    // Rank 0's logs, attempt by attempt.
    auto sources = FindLogSources({JoinPath(dir, "logs")});
    if (sources.ok()) {
      for (const LogSource& source : *sources) {
        if (source.rank != 0) continue;
        std::vector<RunPoint> points = ReadRankLog(source.path, std::max(0, source.attempt));
        summary.points.insert(summary.points.end(), points.begin(), points.end());
        if (!points.empty()) summary.metrics_source = JoinPath("logs", source.display);
      }
    }
  }
  Derive(&summary);
  return summary;
}

std::string DescribeRootCause(const nlohmann::ordered_json& cause) {
  if (!cause.is_object()) return "none";
  if (cause.contains("launcher_error")) return cause["launcher_error"].get<std::string>();
  std::string ending = cause.value("signal", 0) != 0 ? fmt::format("signal {}", cause.value("signal", 0))
                                                     : fmt::format("exit code {}", cause.value("exit_code", 0));
  return fmt::format("rank {} on {} ({}{}){}", cause.value("rank", -1), cause.value("host", "?"),
                     cause.value("hung", false) ? "hung, " : "", ending,
                     cause.value("message", "").empty() ? "" : ": " + cause.value("message", ""));
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
  out += fmt::format("  root cause: {}\n", DescribeRootCause(s.root_cause));
  if (s.points.empty()) return out + "  metrics:    none found (no metrics.jsonl, no step lines in rank 0's log)\n";
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
                                 {"metrics_source", s.metrics_source},
                                 {"points", s.points.size()},
                                 {"step_last", s.step_last},
                                 {"steps_per_s", s.steps_per_s},
                                 {"tokens_per_s", s.tokens_per_s},
                                 {"loss_first", s.loss_first},
                                 {"loss_last", s.loss_last},
                                 {"loss_min", s.loss_min}};
  return root.dump(2) + "\n";
}

std::string RenderRunPlot(const RunSummary& s) {
  double t0 = 0;
  for (const RunPoint& point : s.points) {
    if (point.time > 0) {
      t0 = point.time;
      break;
    }
  }
  benchmark::PlotSeries loss{"loss", {}}, rate{"tokens/s", {}};
  for (const RunPoint& point : s.points) {
    if (point.time <= 0) continue;
    loss.points.emplace_back(point.time - t0, point.loss);
    if (point.tokens_per_s > 0) rate.points.emplace_back(point.time - t0, point.tokens_per_s);
  }
  benchmark::PlotSpec loss_panel{"loss: " + s.dir, "seconds since the first step", "loss", false, {loss}};
  benchmark::PlotSpec rate_panel{"throughput", "seconds since the first step", "tokens/s", false, {rate}};
  return benchmark::RenderSvgPanels({loss_panel, rate_panel});
}

}  // namespace primus::analyze
