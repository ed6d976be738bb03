#include "monitor/job_view_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "util/json_fields.h"
#include "telemetry/job_view.h"
#include "util/process_stamp.h"
#include "util/strings.h"

namespace primus::monitor {
namespace {

using nlohmann::json;

// Fields of a view that may be absent or of the wrong type read as absent
// (util/json_fields.h): unknown values are left out of the view, never
// written as -1 or 0 (docs/monitor.md).
using json_fields::Array;
using json_fields::Number;
using json_fields::Object;

// Host names and states come from other machines: nothing in them may move
// the cursor or recolour the terminal.
std::string Text(const json& object, const char* key) {
  return EscapeControlCharacters(json_fields::Text(object, key));
}

std::string Or(const std::optional<double>& value, const std::function<std::string(double)>& format) {
  return value ? format(*value) : "-";
}

std::string Integer(double value) { return fmt::format("{}", static_cast<long long>(std::llround(value))); }

std::string Percent(double value) { return fmt::format("{:.0f}%", value); }

// Six characters or fewer: 3.2100, 12.345, 123.45, 1.235e+04.
std::string Loss(double value) {
  double magnitude = std::fabs(value);
  if (magnitude >= 1000) return fmt::format("{:.4g}", value);
  if (magnitude >= 100) return fmt::format("{:.2f}", value);
  if (magnitude >= 10) return fmt::format("{:.3f}", value);
  return fmt::format("{:.4f}", value);
}

std::string StepTime(double seconds) {
  if (seconds < 10) return fmt::format("{:.3f}s", seconds);
  if (seconds < 100) return fmt::format("{:.1f}s", seconds);
  return FormatDuration(seconds);
}

// Display columns of `text` (UTF-8: continuation bytes take none).
size_t Columns(const std::string& text) {
  size_t columns = 0;
  for (unsigned char byte : text) {
    if ((byte & 0xC0) != 0x80) ++columns;
  }
  return columns;
}

// `text` cut to `width` columns (0: as is), ending in '>' when something was cut.
std::string Cut(const std::string& text, int width) {
  if (width <= 0 || Columns(text) <= static_cast<size_t>(width)) return text;
  std::string out;
  size_t columns = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char byte = static_cast<unsigned char>(text[i]);
    bool starts = (byte & 0xC0) != 0x80;
    if (starts && columns == static_cast<size_t>(width - 1)) break;
    if (starts) ++columns;
    out += text[i];
  }
  return out + ">";
}

// Segments joined by two spaces, empty ones skipped.
std::string Segments(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    if (!out.empty()) out += "  ";
    out += part;
  }
  return out;
}

std::string ProgressBar(double progress, int cells, bool ascii) {
  progress = std::clamp(progress, 0.0, 1.0);
  int filled = static_cast<int>(std::floor(progress * cells + 1e-9));
  std::string bar = "[";
  for (int i = 0; i < cells; ++i) bar += i < filled ? (ascii ? "#" : "\u2588") : (ascii ? "-" : "\u2591");
  return bar + "]";
}

struct StragglerMarks {
  std::map<long long, double> rank_ratio;          // rank -> ratio to the median
  std::set<std::pair<long long, long long>> gpus;  // (node rank, gpu index)
};

StragglerMarks ReadStragglers(const json& view) {
  StragglerMarks marks;
  for (const json& entry : Array(view, "stragglers")) {
    std::string kind = Text(entry, "kind");
    if (kind == "rank") {
      if (auto rank = Number(entry, "rank")) marks.rank_ratio[std::llround(*rank)] = Number(entry, "ratio").value_or(0);
    } else if (kind == "gpu") {
      auto node = Number(entry, "node_rank");
      auto gpu = Number(entry, "gpu");
      if (node && gpu) marks.gpus.insert({std::llround(*node), std::llround(*gpu)});
    }
  }
  return marks;
}

std::string DescribeStraggler(const json& entry) {
  std::string host = Text(entry, "host");
  auto node = Number(entry, "node_rank");
  std::string where = host.empty() ? "" : " on " + host;
  if (node) where += fmt::format(" (node {})", Integer(*node));
  std::string samples;
  if (auto count = Number(entry, "samples")) samples = fmt::format(" in {} samples", Integer(*count));
  if (Text(entry, "kind") == "gpu") {
    return fmt::format("gpu {}{}: {} busy, the job's median {}{}", Or(Number(entry, "gpu"), Integer), where,
                       Or(Number(entry, "utilization_percent"), Percent),
                       Or(Number(entry, "median_utilization_percent"), Percent), samples);
  }
  return fmt::format("rank {}{}: step {}, {} the median {}{}", Or(Number(entry, "rank"), Integer), where,
                     Or(Number(entry, "step_time_s"), StepTime),
                     Or(Number(entry, "ratio"), [](double r) { return fmt::format("{:.2f}x", r); }),
                     Or(Number(entry, "median_step_time_s"), StepTime), samples);
}

// The GPU a rank uses, when the node's GPUs map to its ranks by local rank.
const json* RankGpu(const json& node, const json& worker) {
  auto local_rank = Number(worker, "local_rank");
  if (!local_rank) return nullptr;
  const json& gpus = Array(node, "gpus");
  if (gpus.size() < Array(node, "workers").size()) return nullptr;
  for (const json& gpu : gpus) {
    auto index = Number(gpu, "index");
    if (index && std::llround(*index) == std::llround(*local_rank)) return &gpu;
  }
  return nullptr;
}

std::string GpuMemory(const json& gpu) {
  auto used = Number(gpu, "memory_used_bytes");
  auto total = Number(gpu, "memory_total_bytes");
  if (!used) return "-";
  return total ? FormatBytes(*used) + "/" + FormatBytes(*total) : FormatBytes(*used);
}

// The rank table's columns: one format for the heading and the rows, so they
// line up; 80 columns in all.
constexpr const char* kRankColumns = "{}{:>5} {:>3} {:<10}{:>6} {:>6} {:>5} {:>7} {:>5} {:>5} {:>3} {:>5} {:>9}";

std::string TrimRight(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string RankHeading() {
  return TrimRight(fmt::format(fmt::runtime(kRankColumns), " ", "RANK", "LR", "STATE", "STEP", "LOSS", "TOK/S", "STEP_T",
                               "CPU%", "RSS", "GPU", "UTIL", "MEM"));
}

std::string RankRow(const json& node, const json& worker, const StragglerMarks& marks) {
  auto rank = Number(worker, "rank");
  auto ratio = rank ? marks.rank_ratio.find(std::llround(*rank)) : marks.rank_ratio.end();
  bool straggler = ratio != marks.rank_ratio.end();
  std::string gpu_index = "", gpu_util = "", gpu_memory = "";
  if (const json* gpu = RankGpu(node, worker)) {
    gpu_index = Or(Number(*gpu, "index"), Integer);
    gpu_util = Or(Number(*gpu, "utilization_percent"), Percent);
    gpu_memory = GpuMemory(*gpu);
    auto node_rank = Number(node, "node_rank");
    auto index = Number(*gpu, "index");
    if (node_rank && index && marks.gpus.count({std::llround(*node_rank), std::llround(*index)})) gpu_util += "!";
  }
  std::string state = Text(worker, "state");
  std::string row = fmt::format(
      fmt::runtime(kRankColumns), straggler ? "!" : " ",
      Or(rank, Integer), Or(Number(worker, "local_rank"), Integer), state.empty() ? "-" : state,
      Or(Number(worker, "step"), Integer), Or(Number(worker, "loss"), Loss),
      Or(Number(worker, "tokens_per_s"), FormatCount), Or(Number(worker, "step_time_s"), StepTime),
      Or(Number(worker, "cpu_percent"), Percent), Or(Number(worker, "rss_bytes"), FormatBytes), gpu_index, gpu_util,
      gpu_memory);
  row = TrimRight(row);
  if (straggler && ratio->second > 0) row += fmt::format("  slow {:.2f}x", ratio->second);
  return row;
}

double StaleAfter(const json& job, const ViewOptions& options) {
  return 3 * Number(job, "interval_s").value_or(options.interval_s);
}

bool IsStale(const json& node, double stale_after) {
  auto age = Number(node, "age_s");
  return age && *age > stale_after;
}

std::string NodeRow(const json& node, double stale_after) {
  std::string name = fmt::format("node {} {}", Or(Number(node, "node_rank"), Integer), Text(node, "host"));
  std::string stale;
  if (IsStale(node, stale_after)) stale = fmt::format("STALE: no report for {}", FormatDuration(*Number(node, "age_s")));
  const json& host = Object(node, "host_stats");
  std::string cpu;
  if (auto percent = Number(host, "cpu_percent")) {
    cpu = "cpu " + Percent(*percent);
    if (auto cpus = Number(host, "cpus")) cpu += " of " + Integer(*cpus);
  }
  std::string memory;
  if (auto used = Number(host, "mem_used_bytes")) {
    memory = "mem " + FormatBytes(*used);
    if (auto total = Number(host, "mem_total_bytes")) memory += "/" + FormatBytes(*total);
  }
  std::string network;
  for (const json& interface : Array(host, "net")) {
    auto rx = Number(interface, "rx_bytes_per_s");
    auto tx = Number(interface, "tx_bytes_per_s");
    if (!rx && !tx) continue;
    if (!network.empty()) network += " ";
    network += fmt::format("{} rx {}/s tx {}/s", Text(interface, "interface"), Or(rx, FormatBytes), Or(tx, FormatBytes));
  }
  std::string gpus;
  const json& gpu_list = Array(node, "gpus");
  if (!gpu_list.empty()) {
    double util_sum = 0, util_min = 1e9, used = 0, total = 0;
    int util_count = 0;
    for (const json& gpu : gpu_list) {
      if (auto util = Number(gpu, "utilization_percent")) {
        util_sum += *util;
        util_min = std::min(util_min, *util);
        ++util_count;
      }
      used += Number(gpu, "memory_used_bytes").value_or(0);
      total += Number(gpu, "memory_total_bytes").value_or(0);
    }
    gpus = fmt::format("{} gpu{}", gpu_list.size(), gpu_list.size() == 1 ? "" : "s");
    if (util_count > 0) {
      gpus += " " + Percent(util_sum / util_count);
      // The least busy one, when it lags the others noticeably.
      if (util_count > 1 && util_sum / util_count - util_min >= 10) gpus += " (min " + Percent(util_min) + ")";
    }
    if (used > 0) gpus += " mem " + FormatBytes(used) + (total > 0 ? "/" + FormatBytes(total) : "");
  }
  return Segments({name, stale, cpu, memory, network, gpus});
}

// Which rows the table shows. Level 0: every rank; 1: stragglers and each
// node's slowest and fastest rank; 2: stragglers only; 3: not every node.
struct TableRow {
  std::string text;
  LineStyle style;
  int node = 0;       // index into the view's nodes
  bool rank = false;  // a rank's row (else the node's)
};

std::vector<const json*> SortedWorkers(const json& node) {
  std::vector<const json*> workers;
  for (const json& worker : Array(node, "workers")) workers.push_back(&worker);
  std::stable_sort(workers.begin(), workers.end(), [](const json* a, const json* b) {
    return Number(*a, "rank").value_or(1e18) < Number(*b, "rank").value_or(1e18);
  });
  return workers;
}

bool IsStragglerRank(const json& worker, const StragglerMarks& marks) {
  auto rank = Number(worker, "rank");
  return rank && marks.rank_ratio.count(std::llround(*rank)) > 0;
}

// The rank rows of one node at a level (0..2).
std::vector<const json*> ShownWorkers(const json& node, const StragglerMarks& marks, int level) {
  std::vector<const json*> workers = SortedWorkers(node);
  if (level == 0) return workers;
  const json* slowest = nullptr;
  const json* fastest = nullptr;
  if (level == 1 && workers.size() > 2) {
    for (const json* worker : workers) {
      auto time = Number(*worker, "step_time_s");
      if (!time) continue;
      if (!slowest || *time > *Number(*slowest, "step_time_s")) slowest = worker;
      if (!fastest || *time < *Number(*fastest, "step_time_s")) fastest = worker;
    }
  }
  std::vector<const json*> shown;
  for (const json* worker : workers) {
    if (IsStragglerRank(*worker, marks) || worker == slowest || worker == fastest) shown.push_back(worker);
  }
  return shown;
}

}  // namespace

std::string FormatCount(double value) {
  double magnitude = std::fabs(value);
  if (magnitude < 1000) return fmt::format("{:.0f}", value);
  static constexpr const char* kUnits[] = {"k", "M", "G", "T"};
  int unit = 0;
  value /= 1000;
  while (std::fabs(value) >= 999.95 && unit < 3) {
    value /= 1000;
    ++unit;
  }
  if (std::fabs(value) < 99.95) return fmt::format("{:.1f}{}", value, kUnits[unit]);
  return fmt::format("{:.0f}{}", value, kUnits[unit]);
}

std::string FormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "K", "M", "G", "T", "P"};
  int unit = 0;
  while (std::fabs(bytes) >= 1023.95 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f}B", bytes);
  if (std::fabs(bytes) < 9.95) return fmt::format("{:.1f}{}", bytes, kUnits[unit]);
  return fmt::format("{:.0f}{}", bytes, kUnits[unit]);
}

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0)) return "-";
  long long total = std::llround(seconds);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  if (total < 86400) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  return fmt::format("{}d{:02}h", total / 86400, total % 86400 / 3600);
}

std::string EndedState(const json& view) {
  std::string state = Text(Object(view, "job"), "state");
  return telemetry::IsEndedJobState(state) ? state : "";
}

std::vector<ViewLine> LayoutJobView(const json& view, const ViewOptions& options) {
  const json& job = Object(view, "job");
  const json& nodes = Array(view, "nodes");
  StragglerMarks marks = ReadStragglers(view);
  double stale_after = StaleAfter(job, options);
  std::vector<ViewLine> header;
  auto add = [&](std::vector<ViewLine>& lines, const std::string& text, LineStyle style) {
    lines.push_back({Cut(text, options.width), style});
  };

  // The job.
  std::string state = Text(job, "state");
  LineStyle state_style = state == "failed" || state == kEndedWithoutRecord ? LineStyle::kBad
                          : state == "restarting" ? LineStyle::kWarn
                          : state == "succeeded" ? LineStyle::kGood
                                                 : LineStyle::kTitle;
  std::string run_id = Text(job, "run_id");
  add(header,
      Segments({"job " + (run_id.empty() ? std::string("-") : run_id), ToUpper(state.empty() ? "unknown" : state),
                "generation " + Or(Number(job, "generation"), Integer), "restarts " + Or(Number(job, "restarts"), Integer),
                "nodes " + Or(Number(job, "nnodes"), Integer), "world " + Or(Number(job, "world_size"), Integer)}),
      state_style);

  auto step = Number(job, "step");
  auto total = Number(job, "total_steps");
  auto progress = Number(job, "progress");
  if (!progress && step && total && *total > 0) progress = *step / *total;
  std::string step_text = "step " + Or(step, Integer) + (total ? "/" + Integer(*total) : "");
  std::string eta = Number(job, "eta_s") ? "ETA " + FormatDuration(*Number(job, "eta_s")) : "";
  std::string bar;
  if (progress) {
    std::string percent = fmt::format("{:.1f}%", *progress * 100);
    int room = options.width > 0
                   ? options.width - static_cast<int>(Columns(step_text) + percent.size() + eta.size()) - 8
                   : 30;
    int cells = std::clamp(room, 10, 40);
    bar = ProgressBar(*progress, cells, options.ascii) + " " + percent;
  }
  add(header, Segments({step_text, bar, eta}), LineStyle::kPlain);

  std::string updated;
  auto time = Number(job, "time");
  bool job_stale = false;
  if (time && options.now > 0) {
    double age = std::max(0.0, options.now - *time);
    updated = "updated " + FormatDuration(age) + " ago";
    job_stale = EndedState(view).empty() && age > stale_after;
  }
  add(header,
      Segments({"loss " + Or(Number(job, "loss"), Loss), "tokens/s " + Or(Number(job, "tokens_per_s"), FormatCount),
                "median step " + Or(Number(job, "median_step_time_s"), StepTime), updated}),
      LineStyle::kPlain);
  if (job_stale) {
    add(header,
        fmt::format("STALE: no update for {} (over 3 sampling intervals): is node 0's agent still running?",
                    FormatDuration(options.now - *time)),
        LineStyle::kBad);
  }

  // Stragglers, each with why.
  const json& stragglers = Array(view, "stragglers");
  if (stragglers.empty()) {
    add(header, "stragglers: none", LineStyle::kPlain);
  } else {
    add(header, fmt::format("stragglers ({}), marked ! below:", stragglers.size()), LineStyle::kWarn);
    size_t listed = stragglers.size();
    if (options.height > 0 && listed > 3) listed = 2;  // a screen keeps room for the table
    for (size_t i = 0; i < listed; ++i) add(header, "  ! " + DescribeStraggler(stragglers[i]), LineStyle::kWarn);
    if (listed < stragglers.size()) {
      add(header, fmt::format("  ... and {} more (primus-cli monitor --once lists them all)", stragglers.size() - listed),
          LineStyle::kWarn);
    }
  }

  // The table: node rows, each followed by its rank rows.
  size_t total_ranks = 0;
  for (const json& node : nodes) total_ranks += Array(node, "workers").size();
  std::vector<std::vector<const json*>> shown(nodes.size());
  // Rows left under the header and the table's heading; a summary takes
  // one more for the line saying what is shown.
  int budget = options.height > 0 ? options.height - static_cast<int>(header.size()) - 1 : 0;
  int level = 0;
  for (; level <= 2; ++level) {
    size_t rows = nodes.size();
    for (size_t i = 0; i < nodes.size(); ++i) {
      shown[i] = ShownWorkers(nodes[i], marks, level);
      rows += shown[i].size();
    }
    if (options.height <= 0 || static_cast<int>(rows) <= budget - (level > 0 ? 1 : 0)) break;
  }
  if (level > 0) --budget;
  std::vector<bool> node_shown(nodes.size(), true);
  size_t hidden_nodes = 0;
  if (level > 2) {
    // Not even one row per node fits: the nodes that need a look (stale,
    // stragglers) with their stragglers, then the others in order, then a
    // line saying how many are left out.
    level = 2;
    int left = std::max(budget - 1, 0);
    std::fill(node_shown.begin(), node_shown.end(), false);
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (node_shown[i]) continue;
        bool needs_look = IsStale(nodes[i], stale_after) || !shown[i].empty();
        for (const json& gpu : Array(nodes[i], "gpus")) {
          auto node_rank = Number(nodes[i], "node_rank");
          auto index = Number(gpu, "index");
          if (node_rank && index && marks.gpus.count({std::llround(*node_rank), std::llround(*index)})) needs_look = true;
        }
        if (pass == 0 && !needs_look) continue;
        int rows = 1 + static_cast<int>(shown[i].size());
        if (rows > left) {
          if (pass == 0 && left > 0) {  // a node with many stragglers: as many as fit
            shown[i].resize(left - 1);
            rows = left;
          } else {
            continue;
          }
        }
        node_shown[i] = true;
        left -= rows;
      }
    }
    for (bool on : node_shown) hidden_nodes += on ? 0 : 1;
  }

  std::vector<ViewLine> lines = header;
  size_t ranks_listed = 0;
  for (size_t i = 0; i < nodes.size(); ++i) ranks_listed += node_shown[i] ? shown[i].size() : 0;
  if (ranks_listed < total_ranks || hidden_nodes > 0) {
    add(lines,
        fmt::format("{} of {} ranks shown: {} (a taller window or --once shows all)", ranks_listed, total_ranks,
                    level == 1 ? "stragglers, each node's slowest and fastest" : "stragglers only"),
        LineStyle::kPlain);
  }
  add(lines, RankHeading(), LineStyle::kHeading);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!node_shown[i]) continue;
    add(lines, NodeRow(nodes[i], stale_after), IsStale(nodes[i], stale_after) ? LineStyle::kBad : LineStyle::kNode);
    for (const json* worker : shown[i]) {
      add(lines, RankRow(nodes[i], *worker, marks), IsStragglerRank(*worker, marks) ? LineStyle::kWarn : LineStyle::kPlain);
    }
  }
  if (hidden_nodes > 0) {
    add(lines,
        fmt::format("... {} more node{}, none stale, no stragglers", hidden_nodes, hidden_nodes == 1 ? "" : "s"),
        LineStyle::kPlain);
  }
  if (nodes.empty()) add(lines, "no node has reported yet", LineStyle::kPlain);
  if (options.height > 0 && static_cast<int>(lines.size()) > options.height) lines.resize(options.height);
  return lines;
}

namespace {

const char* StyleCode(LineStyle style) {
  switch (style) {
    case LineStyle::kTitle: return "\x1b[1m";
    case LineStyle::kHeading: return "\x1b[7m";
    case LineStyle::kNode: return "\x1b[1;36m";
    case LineStyle::kWarn: return "\x1b[33m";
    case LineStyle::kBad: return "\x1b[1;31m";
    case LineStyle::kGood: return "\x1b[1;32m";
    case LineStyle::kPlain: return "";
  }
  return "";
}

std::string Styled(const ViewLine& line, bool color) {
  const char* code = StyleCode(line.style);
  if (!color || *code == '\0') return line.text;
  return std::string(code) + line.text + "\x1b[0m";
}

}  // namespace

std::string DrawLines(const std::vector<ViewLine>& lines, bool color) {
  std::string out;
  for (const ViewLine& line : lines) out += Styled(line, color) + "\n";
  return out;
}

std::string DrawScreen(const std::vector<ViewLine>& lines, bool color) {
  std::string out = "\x1b[H";
  for (size_t i = 0; i < lines.size(); ++i) {
    out += Styled(lines[i], color) + "\x1b[K";
    if (i + 1 < lines.size()) out += "\r\n";
  }
  return out + "\x1b[J";
}

}  // namespace primus::monitor
