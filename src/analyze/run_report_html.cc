#include "analyze/run_report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "analyze/run_summary.h"
#include "util/strings.h"
#include "util/xml_escape.h"

namespace primus::analyze {
namespace {

// Ranks drawn in the step-time chart; a wider job shows its slowest ranks.
constexpr size_t kMaxRankBoxes = 64;
// Nodes drawn one GPU chart each.
constexpr size_t kMaxNodeCharts = 16;

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; background: #f4f5f7; color: #1d232b; }
main { max-width: 960px; margin: 0 auto; padding: 16px 20px 40px; }
h1 { font-size: 22px; margin: 18px 0 4px; word-break: break-all; }
h2 { font-size: 17px; margin: 0 0 10px; }
section { background: white; border: 1px solid #dde1e6; border-radius: 6px; padding: 14px 16px; margin: 14px 0; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 10px; font-size: 13px; font-weight: 600; color: white; background: #6b7280; }
.badge.succeeded { background: #2e7d32; } .badge.failed, .badge.interrupted { background: #c62828; } .badge.running { background: #1565c0; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 0; font-size: 14px; }
dl.summary dt { color: #5b6470; } dl.summary dd { margin: 0; word-break: break-word; }
p.missing { color: #6b7280; font-style: italic; margin: 4px 0; }
svg.chart { display: block; max-width: 100%; height: auto; margin: 6px 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceff2; vertical-align: top; }
td.value { font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
td.origin { color: #5b6470; }
tr.failure td { color: #b71c1c; }
details > summary { cursor: pointer; font-weight: 600; margin: 4px 0; }
nav { font-size: 13px; } nav a { margin-right: 12px; color: #1565c0; text-decoration: none; }
footer { color: #8a929c; font-size: 12px; margin-top: 18px; }
)";

std::string Missing(const std::string& text) { return "<p class=\"missing\">" + EscapeXml(text) + "</p>\n"; }

std::string Seconds(double seconds) {
  if (seconds < 120) return fmt::format("{:.3g} s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f} min {:.0f} s", std::floor(seconds / 60), std::fmod(seconds, 60));
  return fmt::format("{:.0f} h {:.0f} min", std::floor(seconds / 3600), std::fmod(seconds, 3600) / 60);
}

// The time every chart's x axis counts from: the run's start, else its first point.
double TimeZero(const RunReport& report) {
  if (report.summary.start_s > 0) return report.summary.start_s;
  for (const RunPoint& point : report.summary.points) {
    if (point.time > 0) return point.time;
  }
  for (const AttemptRecord& attempt : report.attempts) {
    if (attempt.start > 0) return attempt.start;
  }
  return 0;
}

std::string SummarySection(const RunReport& report) {
  const RunSummary& s = report.summary;
  std::string name = std::filesystem::path(s.dir).filename().string();
  if (name.empty()) name = s.dir;
  std::string status = s.status.empty() ? "unknown" : s.status;
  std::string html = fmt::format("<h1>{} <span class=\"badge {}\">{}</span></h1>\n", EscapeXml(name), EscapeXml(status),
                                 EscapeXml(status));
  std::vector<std::pair<std::string, std::string>> rows;  // already escaped
  rows.emplace_back("directory", EscapeXml(s.dir));
  rows.emplace_back("task", EscapeXml(s.task));
  rows.emplace_back("status", EscapeXml(fmt::format("{} (exit {})", status, s.exit_code)));
  rows.emplace_back("started", EscapeXml(s.start_time.empty() ? "-" : s.start_time));
  rows.emplace_back("duration", EscapeXml(s.duration_s > 0 || !s.end_time.empty() ? Seconds(s.duration_s) : "- (no end time)"));
  rows.emplace_back("restarts", fmt::format("{}", s.restarts));
  for (const AttemptFailure& failure : s.failures) rows.emplace_back("failed", EscapeXml(DescribeAttemptFailure(failure)));
  rows.emplace_back("root cause", EscapeXml(DescribeRunRootCause(s)));
  const auto& hosts = report.metadata["hosts"];
  if (hosts.is_array() && !hosts.empty()) {
    std::vector<std::string> names;
    for (const auto& host : hosts) names.push_back(host.is_string() ? host.get<std::string>() : host.dump());
    rows.emplace_back("hosts", EscapeXml(Join(names, ", ")));
  }
  const auto& argv = report.metadata["argv"];
  if (argv.is_array()) {
    std::vector<std::string> words;
    for (const auto& word : argv) words.push_back(word.is_string() ? word.get<std::string>() : word.dump());
    rows.emplace_back("command", "<code>" + EscapeXml(ShellJoin(words)) + "</code>");
  }
  const auto& git = report.metadata["git"];
  if (git.is_object() && git["commit"].is_string()) {
    rows.emplace_back("git", EscapeXml(git["commit"].get<std::string>() + (git["dirty"].is_boolean() && git["dirty"].get<bool>() ? " (dirty)" : "")));
  }
  if (!s.points.empty()) {
    rows.emplace_back("steps", EscapeXml(fmt::format("{} (last), {} steps/s, from {}", s.step_last,
                                                     FormatMeasure(s.steps_per_s), s.metrics_source)));
    rows.emplace_back("tokens/s", s.tokens_per_s > 0 ? FormatMeasure(s.tokens_per_s) + " (mean)" : "-");
    rows.emplace_back("loss", fmt::format("{} &rarr; {} (min {})", FormatMeasure(s.loss_first),
                                          FormatMeasure(s.loss_last), FormatMeasure(s.loss_min)));
  }
  html += "<section id=\"summary\"><h2>Summary</h2><dl class=\"summary\">\n";
  for (const auto& [label, value] : rows) html += fmt::format("<dt>{}</dt><dd>{}</dd>\n", label, value);
  html += "</dl>\n";
  html += "<nav><a href=\"#training\">loss and throughput</a><a href=\"#step-times\">step time per rank</a>"
          "<a href=\"#step-parts\">where the step time goes</a>"
          "<a href=\"#nodes\">nodes</a><a href=\"#attempts\">attempts and failures</a>"
          "<a href=\"#configuration\">configuration</a><a href=\"#environment\">environment</a></nav>\n";
  return html + "</section>\n";
}

std::string TrainingSection(const RunReport& report, double t0) {
  const RunSummary& s = report.summary;
  std::string html = "<section id=\"training\"><h2>Loss and throughput</h2>\n";
  if (s.points.empty()) {
    return html + Missing("No training metrics: no metrics.jsonl in the experiment directory and no progress lines "
                          "(our trainer's, Megatron-LM's, TorchTitan's, Hugging Face's, nanoGPT's) in the ranks' logs.") +
           "</section>\n";
  }
  // One series per attempt, so steps redone after a restart show as such.
  std::map<int, ChartSeries> loss, rate;
  bool timed = false;
  for (const RunPoint& point : s.points) {
    ChartSeries& series = loss[point.attempt];
    series.points.emplace_back(static_cast<double>(point.step), point.loss);
    if (point.tokens_per_s > 0 && point.time > 0) {
      rate[point.attempt].points.emplace_back(point.time - t0, point.tokens_per_s);
      timed = true;
    }
  }
  LineChart loss_chart{"loss-chart", "loss", "step", "loss", {}, {}, /*y_from_zero=*/false};
  for (auto& [attempt, series] : loss) {
    series.name = loss.size() == 1 ? "loss" : fmt::format("attempt {}", attempt);
    loss_chart.series.push_back(std::move(series));
  }
  html += RenderLineChart(loss_chart);
  if (!timed) {
    return html + Missing("No throughput: the metrics carry no tokens_per_s with a time.") + "</section>\n";
  }
  LineChart rate_chart{"throughput-chart", "throughput", "seconds since the run started", "tokens/s", {}, {}, true};
  for (auto& [attempt, series] : rate) {
    series.name = rate.size() == 1 ? "tokens/s" : fmt::format("attempt {}", attempt);
    rate_chart.series.push_back(std::move(series));
  }
  for (const AttemptRecord& attempt : report.attempts) {
    if (attempt.attempt > 0 && attempt.start > 0) {
      rate_chart.markers.push_back({attempt.start - t0, fmt::format("restart: attempt {}", attempt.attempt)});
    }
  }
  return html + RenderLineChart(rate_chart) + "</section>\n";
}

std::string StepTimeSection(const RunReport& report) {
  std::string html = "<section id=\"step-times\"><h2>Step time per rank</h2>\n";
  bool any = std::any_of(report.ranks.begin(), report.ranks.end(),
                         [](const RankStepTimes& rank) { return !rank.step_time_s.empty(); });
  if (!any) {
    return html + Missing("No per-rank step times: no logs/attempt_<n>/<host>.rank<R>.metrics.jsonl with step_time_s "
                          "(the workers' PRIMUS_METRICS_FILE, docs/monitor.md).") +
           "</section>\n";
  }
  struct Row {
    const RankStepTimes* rank;
    double median, p90, max;
  };
  std::vector<Row> rows;
  for (const RankStepTimes& rank : report.ranks) {
    if (rank.step_time_s.empty()) continue;
    std::vector<double> sorted = rank.step_time_s;
    std::sort(sorted.begin(), sorted.end());
    auto at = [&](double q) { return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))]; };
    rows.push_back({&rank, at(0.5), at(0.9), sorted.back()});
  }
  std::vector<Row> drawn = rows;
  if (drawn.size() > kMaxRankBoxes) {
    std::stable_sort(drawn.begin(), drawn.end(), [](const Row& a, const Row& b) { return a.median > b.median; });
    drawn.resize(kMaxRankBoxes);
    std::sort(drawn.begin(), drawn.end(), [](const Row& a, const Row& b) { return a.rank->rank < b.rank->rank; });
    html += Missing(fmt::format("{} ranks: the {} with the highest median step time are drawn.", rows.size(), kMaxRankBoxes));
  }
  BoxChart chart{"step-time-chart", "step time per rank", "seconds", {}};
  for (const Row& row : drawn) chart.groups.push_back({fmt::format("rank {}", row.rank->rank), row.rank->step_time_s});
  html += RenderBoxChart(chart);
  html += "<details><summary>per rank</summary><table><tr><th>rank</th><th>host</th><th>steps</th><th>median s</th>"
          "<th>p90 s</th><th>max s</th></tr>\n";
  for (const Row& row : rows) {
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", row.rank->rank,
                        EscapeXml(row.rank->host), row.rank->step_time_s.size(), FormatMeasure(row.median),
                        FormatMeasure(row.p90), FormatMeasure(row.max));
  }
  return html + "</table></details>\n</section>\n";
}

// How to make each framework say where its step time goes.
constexpr const char* kHowToReportStepParts =
    "Megatron-LM prints it with --timing-log-level 1 (or 2; --timing-log-option all also names the slowest rank). "
    "The example trainer (examples/gpt/train.py) reports it by itself. TorchTitan v0.2.2 prints no part of its step "
    "(its data-loading time goes only to its own TensorBoard, metrics.enable_tensorboard). Any other trainer: add "
    "\"time_parts\": {\"compute\": s, \"communication\": s, \"data\": s} to its PRIMUS_METRICS_FILE lines "
    "(docs/monitor.md).";

// A rank's phases averaged over its steps (the last attempt that reported any).
struct RankParts {
  const RankStepTimes* rank = nullptr;
  telemetry::StepTimeBreakdown mean;
  std::vector<const StepParts*> steps;  // of that attempt
  double busy() const { return mean.busy(); }
};

RankParts AverageParts(const RankStepTimes& rank) {
  RankParts out;
  out.rank = &rank;
  int last_attempt = rank.parts.back().attempt;
  for (const StepParts& step : rank.parts) {
    if (step.attempt == last_attempt) out.steps.push_back(&step);
  }
  for (const StepParts* step : out.steps) {
    for (int phase = 0; phase < telemetry::kStepPhaseCount; ++phase) out.mean.seconds[phase] += step->parts.seconds[phase];
    out.mean.job_wide = out.mean.job_wide || step->parts.job_wide;
    if (step->parts.slowest_rank) out.mean.slowest_rank = step->parts.slowest_rank;
    for (const std::string& name : step->parts.unplaced) {
      if (std::find(out.mean.unplaced.begin(), out.mean.unplaced.end(), name) == out.mean.unplaced.end()) {
        out.mean.unplaced.push_back(name);
      }
    }
  }
  for (double& seconds : out.mean.seconds) seconds /= static_cast<double>(out.steps.size());
  return out;
}

std::vector<std::string> PhaseNames() {
  std::vector<std::string> names;
  for (int phase = 0; phase < telemetry::kStepPhaseCount; ++phase) {
    names.push_back(telemetry::StepPhaseName(static_cast<telemetry::StepPhase>(phase)));
  }
  return names;
}

std::vector<double> PhaseValues(const telemetry::StepTimeBreakdown& parts) {
  return std::vector<double>(std::begin(parts.seconds), std::end(parts.seconds));
}

// "compute 0.18 s (72%), communication 0.05 s (20%), ..." for the phases that are not zero.
std::string DescribePhases(const telemetry::StepTimeBreakdown& parts) {
  std::vector<std::string> items;
  double total = parts.total();
  for (int phase = 0; phase < telemetry::kStepPhaseCount; ++phase) {
    if (parts.seconds[phase] <= 0) continue;
    items.push_back(fmt::format("{} {} s ({:.0f}%)", telemetry::StepPhaseName(static_cast<telemetry::StepPhase>(phase)),
                                FormatMeasure(parts.seconds[phase]), total > 0 ? 100 * parts.seconds[phase] / total : 0));
  }
  return Join(items, ", ");
}

// Where each rank's step time goes, per rank and per step, and which rank is
// the slowest (the others wait for it in communication).
std::string StepPartsSection(const RunReport& report) {
  std::string html = "<section id=\"step-parts\"><h2>Where the step time goes</h2>\n";
  std::vector<RankParts> ranks;
  for (const RankStepTimes& rank : report.ranks) {
    if (!rank.parts.empty()) ranks.push_back(AverageParts(rank));
  }
  if (ranks.empty()) {
    return html + Missing(std::string("No rank said where its step time goes. ") + kHowToReportStepParts) + "</section>\n";
  }
  const RankParts* slowest = &ranks.front();
  for (const RankParts& rank : ranks) {
    if (rank.busy() > slowest->busy()) slowest = &rank;
  }
  std::vector<double> busy;
  for (const RankParts& rank : ranks) busy.push_back(rank.busy());
  std::sort(busy.begin(), busy.end());
  double median_busy = busy[(busy.size() - 1) / 2];
  std::string verdict;
  if (slowest->mean.job_wide) {
    verdict = fmt::format("Megatron-LM's timers, printed by rank {} for the whole job, each the slowest rank's figure: {}.",
                          slowest->rank->rank, DescribePhases(slowest->mean));
    verdict += slowest->mean.slowest_rank
                   ? fmt::format(" Slowest rank in the largest part: rank {}.", *slowest->mean.slowest_rank)
                   : std::string(" They do not say which rank is the slowest: --timing-log-option all does.");
  } else if (ranks.size() > 1) {
    verdict = fmt::format(
        "Slowest rank: rank {} on {}, busy {} s per step (compute, data and optimizer) where the median rank is busy {} s; "
        "the others wait for it in communication. Rank {}: {}.",
        slowest->rank->rank, slowest->rank->host, FormatMeasure(slowest->busy()), FormatMeasure(median_busy),
        slowest->rank->rank, DescribePhases(slowest->mean));
  } else {
    verdict = fmt::format("Rank {}: {}.", slowest->rank->rank, DescribePhases(slowest->mean));
  }
  html += fmt::format("<p class=\"verdict\" data-slowest-rank=\"{}\">{}</p>\n",
                      slowest->mean.slowest_rank.value_or(slowest->rank->rank), EscapeXml(verdict));

  // Per rank: a wide job shows the busiest ranks.
  std::vector<const RankParts*> drawn;
  for (const RankParts& rank : ranks) drawn.push_back(&rank);
  if (drawn.size() > kMaxRankBoxes) {
    std::stable_sort(drawn.begin(), drawn.end(), [](const RankParts* a, const RankParts* b) { return a->busy() > b->busy(); });
    drawn.resize(kMaxRankBoxes);
    std::sort(drawn.begin(), drawn.end(), [](const RankParts* a, const RankParts* b) { return a->rank->rank < b->rank->rank; });
    html += Missing(fmt::format("{} ranks: the {} busiest are drawn.", ranks.size(), kMaxRankBoxes));
  }
  StackedBarChart per_rank{"step-parts-by-rank", "seconds per step, by rank", "seconds per step", PhaseNames(), {}};
  for (const RankParts* rank : drawn) {
    std::string label = rank->mean.job_wide ? fmt::format("job (rank {}'s timers)", rank->rank->rank)
                                            : fmt::format("rank {}", rank->rank->rank);
    bool marked = rank == slowest && ranks.size() > 1;
    per_rank.bars.push_back({marked ? label + " (slowest)" : label, PhaseValues(rank->mean), marked});
  }
  html += RenderStackedBarChart(per_rank);

  // Per step, on the slowest rank: at most kMaxStepBars bars, each the mean of consecutive steps.
  constexpr size_t kMaxStepBars = 100;
  const std::vector<const StepParts*>& steps = slowest->steps;
  size_t per_bar = (steps.size() + kMaxStepBars - 1) / kMaxStepBars;
  StackedBarChart per_step{"step-parts-by-step", fmt::format("seconds per step on rank {}", slowest->rank->rank),
                           "seconds per step", PhaseNames(), {}};
  for (size_t first = 0; first < steps.size(); first += per_bar) {
    size_t last = std::min(steps.size(), first + per_bar);
    telemetry::StepTimeBreakdown sum;
    for (size_t i = first; i < last; ++i) {
      for (int phase = 0; phase < telemetry::kStepPhaseCount; ++phase) sum.seconds[phase] += steps[i]->parts.seconds[phase];
    }
    for (double& seconds : sum.seconds) seconds /= static_cast<double>(last - first);
    std::string label = last - first == 1 ? fmt::format("step {}", steps[first]->step)
                                          : fmt::format("steps {}-{}", steps[first]->step, steps[last - 1]->step);
    per_step.bars.push_back({label, PhaseValues(sum), false});
  }
  html += RenderStackedBarChart(per_step);
  if (!slowest->mean.unplaced.empty()) {
    html += Missing("Reported but not stacked (nothing says what they overlap): " + Join(slowest->mean.unplaced, ", ") + ".");
  }
  html += "<details><summary>per rank</summary><table><tr><th>rank</th><th>host</th><th>steps</th>";
  for (const std::string& name : PhaseNames()) html += "<th>" + name + " s</th>";
  html += "</tr>\n";
  for (const RankParts& rank : ranks) {
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td>", rank.rank->rank, EscapeXml(rank.rank->host), rank.steps.size());
    for (double seconds : rank.mean.seconds) html += "<td>" + FormatMeasure(seconds) + "</td>";
    html += "</tr>\n";
  }
  return html + "</table></details>\n</section>\n";
}

std::vector<ChartPoint> Since(const std::vector<ChartPoint>& points, double t0) {
  std::vector<ChartPoint> shifted;
  shifted.reserve(points.size());
  for (auto [x, y] : points) shifted.emplace_back(x - t0, y);
  return shifted;
}

std::string NodeName(const NodeHistory& node) {
  return node.host.empty() ? fmt::format("node {}", node.node_rank) : fmt::format("node {} ({})", node.node_rank, node.host);
}

std::string NodesSection(const RunReport& report, double t0) {
  std::string html = "<section id=\"nodes\"><h2>GPU and CPU per node</h2>\n";
  if (report.nodes.empty()) {
    return html + Missing("No telemetry history: no logs/telemetry/history.jsonl (the run was not sampled, e.g. "
                          "--telemetry-interval 0).") +
           "</section>\n";
  }
  LineChart cpu{"cpu-chart", "host CPU per node", "seconds since the run started", "% of one core", {}, {}, true};
  for (const NodeHistory& node : report.nodes) {
    if (!node.cpu_percent.empty()) cpu.series.push_back({NodeName(node), Since(node.cpu_percent, t0)});
  }
  size_t drawn = 0;
  for (const NodeHistory& node : report.nodes) {
    bool any = std::any_of(node.gpu_utilization.begin(), node.gpu_utilization.end(),
                           [](const auto& series) { return !series.empty(); });
    if (!any) {
      html += Missing(NodeName(node) + ": no GPU samples.");
      continue;
    }
    if (drawn++ == kMaxNodeCharts) {
      html += Missing(fmt::format("{} nodes: GPU charts are drawn for the first {}.", report.nodes.size(), kMaxNodeCharts));
    }
    if (drawn > kMaxNodeCharts) continue;
    LineChart gpus{fmt::format("gpu-chart-node{}", node.node_rank), "GPU utilization, " + NodeName(node),
                   "seconds since the run started", "%", {}, {}, true};
    for (size_t gpu = 0; gpu < node.gpu_utilization.size(); ++gpu) {
      if (!node.gpu_utilization[gpu].empty()) {
        gpus.series.push_back({fmt::format("GPU {}", gpu), Since(node.gpu_utilization[gpu], t0)});
      }
    }
    html += RenderLineChart(gpus);
  }
  html += cpu.series.empty() ? Missing("No host CPU samples.") : RenderLineChart(cpu);
  return html + "</section>\n";
}

std::string WorkerName(const EndingLine& ending) {
  return ending.rank >= 0 ? fmt::format("{} rank {}", ending.host, ending.rank) : ending.host;
}

std::string AttemptsSection(const RunReport& report, double t0) {
  std::string html = "<section id=\"attempts\"><h2>Attempts, restarts and failures</h2>\n";
  html += fmt::format("<p>{} restart(s); root cause: {}</p>\n", report.summary.restarts,
                      EscapeXml(DescribeRunRootCause(report.summary)));
  if (!report.summary.failures.empty()) {
    html += "<ul class=\"causes\">\n";
    for (const AttemptFailure& failure : report.summary.failures) {
      html += "<li>" + EscapeXml(DescribeAttemptFailure(failure)) + "</li>\n";
    }
    html += "</ul>\n";
  }
  if (report.attempts.empty()) return html + Missing("No attempt logs under logs/attempt_<n>/.") + "</section>\n";
  Timeline timeline{"attempts-timeline", "attempts", "seconds since the run started", {}, {}, {}};
  std::vector<const EndingLine*> failures;
  for (const AttemptRecord& attempt : report.attempts) {
    size_t row = timeline.rows.size();
    timeline.rows.push_back(fmt::format("attempt {}", attempt.attempt));
    if (attempt.start > 0) {
      double end = attempt.end > attempt.start ? attempt.end : attempt.start;
      timeline.spans.push_back({row, attempt.start - t0, end - t0,
                                fmt::format("attempt {}: {} to {} s", attempt.attempt,
                                            FormatMeasure(attempt.start - t0), FormatMeasure(end - t0))});
    }
    for (const EndingLine& ending : attempt.endings) {
      if (ending.time <= 0) continue;
      std::string label = WorkerName(ending) + ": " + ending.text;
      if (!ending.error_message.empty()) label += "\n" + ending.error_message;
      timeline.marks.push_back({row, ending.time - t0, label, ending.failure});
      if (ending.failure) failures.push_back(&ending);
    }
  }
  html += RenderTimeline(timeline);
  html += "<table><tr><th>attempt</th><th>at s</th><th>host</th><th>rank</th><th>how the worker ended</th></tr>\n";
  for (const AttemptRecord& attempt : report.attempts) {
    for (const EndingLine& ending : attempt.endings) {
      std::string text = EscapeXml(ending.text);
      if (!ending.error_message.empty()) text += "<br>" + EscapeXml(ending.error_message);
      html += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          ending.failure ? " class=\"failure\"" : "", attempt.attempt,
                          ending.time > 0 ? FormatMeasure(ending.time - t0) : "-", EscapeXml(ending.host),
                          ending.rank >= 0 ? std::to_string(ending.rank) : "-", text);
    }
  }
  return html + "</table>\n</section>\n";
}

std::string OriginTable(const std::vector<OriginEntry>& entries, const char* name_header) {
  std::string html = fmt::format("<table><tr><th>{}</th><th>value</th><th>origin</th></tr>\n", name_header);
  for (const OriginEntry& entry : entries) {
    html += fmt::format("<tr><td>{}</td><td class=\"value\">{}</td><td class=\"origin\">{}</td></tr>\n", EscapeXml(entry.name),
                        EscapeXml(entry.value), EscapeXml(entry.origin));
  }
  return html + "</table>\n";
}

std::string ConfigSection(const RunReport& report) {
  std::string html = "<section id=\"configuration\"><h2>Configuration</h2>\n";
  if (report.config.empty()) return html + Missing("No configuration recorded (config/resolved.yaml).") + "</section>\n";
  html += fmt::format("<details open><summary>{} settings from config/resolved.yaml</summary>\n", report.config.size());
  html += OriginTable(report.config, "key") + "</details>\n";
  if (report.launcher.empty()) return html + Missing("No launcher settings recorded (config/launcher.json).") + "</section>\n";
  html += fmt::format("<details open><summary>{} launcher settings the launch ran with, flags and --set included "
                      "(config/launcher.json)</summary>\n",
                      report.launcher.size());
  return html + OriginTable(report.launcher, "key") + "</details>\n</section>\n";
}

std::string EnvironmentSection(const RunReport& report) {
  std::string html = "<section id=\"environment\"><h2>Environment</h2>\n";
  if (report.environment.empty()) return html + Missing("No worker environment recorded (env/env.json).") + "</section>\n";
  html += fmt::format("<details><summary>{} variables the workers received (env/env.json)</summary>\n",
                      report.environment.size());
  return html + OriginTable(report.environment, "variable") + "</details>\n</section>\n";
}

}  // namespace

std::string RenderRunReportHtml(const RunReport& report) {
  double t0 = TimeZero(report);
  std::string name = std::filesystem::path(report.summary.dir).filename().string();
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>run report: {}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
      EscapeXml(name.empty() ? report.summary.dir : name), kStyle);
  html += SummarySection(report);
  html += TrainingSection(report, t0);
  html += StepTimeSection(report);
  html += StepPartsSection(report);
  html += NodesSection(report, t0);
  html += AttemptsSection(report, t0);
  html += ConfigSection(report);
  html += EnvironmentSection(report);
  if (!report.notes.empty()) {
    html += "<section id=\"notes\"><h2>Not shown</h2>\n";
    for (const std::string& note : report.notes) html += Missing(note);
    html += "</section>\n";
  }
  html += "<footer>primus-cli analyze run --html. Secrets appear as &lt;redacted&gt;, as the experiment directory "
          "records them.</footer>\n</main>\n</body>\n</html>\n";
  return html;
}

}  // namespace primus::analyze
