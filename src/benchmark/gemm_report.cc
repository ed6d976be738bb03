#include "benchmark/gemm_report.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "util/strings.h"

namespace primus::benchmark {
namespace {

std::string ShapeKey(const GemmResult& r) { return r.shape.Describe() + " " + r.dtype_requested; }

std::string CheckText(const GemmCheck& check) {
  if (!check.performed) return "-";
  if (!check.passed) return fmt::format("FAILED {} of {}", check.wrong, check.checked);
  return fmt::format("ok ({} {})", check.mode, check.checked);
}

}  // namespace

std::vector<SlowestDevice> FindSlowestDevices(const std::vector<GemmResult>& results) {
  std::map<std::string, std::vector<const GemmResult*>> by_shape;
  std::vector<std::string> order;
  for (const GemmResult& r : results) {
    std::string key = ShapeKey(r);
    if (!by_shape.count(key)) order.push_back(key);
    by_shape[key].push_back(&r);
  }
  std::vector<SlowestDevice> slowest;
  for (const std::string& key : order) {
    const auto& group = by_shape[key];
    if (group.size() < 2) continue;
    std::vector<double> rates;
    for (const GemmResult* r : group) rates.push_back(r->tflops);
    std::sort(rates.begin(), rates.end());
    size_t middle = rates.size() / 2;
    double median = rates.size() % 2 ? rates[middle] : (rates[middle - 1] + rates[middle]) / 2;
    const GemmResult* worst = *std::min_element(group.begin(), group.end(),
                                                [](const GemmResult* a, const GemmResult* b) { return a->tflops < b->tflops; });
    slowest.push_back({key, worst->rank, worst->host, worst->device, worst->tflops, median,
                       worst->tflops < median * (1 - kSlowDeviceMargin)});
  }
  return slowest;
}

std::string FormatGemmTable(const std::vector<GemmResult>& results) {
  if (results.empty()) return "benchmark gemm: no results\n";
  std::string out;
  std::set<std::string> libraries;
  for (const GemmResult& r : results) libraries.insert(r.library);
  const GemmResult& first = results.front();
  out += fmt::format("benchmark gemm: {}\n", Join(std::vector<std::string>(libraries.begin(), libraries.end()), "; "));
  out += fmt::format("  timed by {} after warm-up; each shape's operands rotate through buffer sets covering at least twice "
                     "the last-level cache (sets, MiB)\n",
                     first.device_id.empty() ? "the wall clock per iteration" : "device events");
  size_t device_width = 6;
  for (const GemmResult& r : results) device_width = std::max(device_width, r.device.size());
  device_width = std::min<size_t>(device_width, 40);
  size_t name_width = 0;  // model-shaped sweeps name each problem
  for (const GemmResult& r : results) name_width = std::max(name_width, r.shape.name.size());
  if (name_width > 0) name_width = std::max<size_t>(name_width, 5);
  auto name_cell = [&](const std::string& name) { return name_width ? fmt::format("{:<{}}  ", name, name_width) : std::string(); };
  out += name_cell("shape");
  out += fmt::format("{:>4}  {:<10}  {:<{}}  {:>6}  {:>6}  {:>6}  {:>2}  {:<9}  {:>6}  {:>10}  {:>9}  {:>8}  {:>6}  {:>8}  {:>7}  {}\n",
                     "rank", "host", "device", device_width, "M", "N", "K", "op", "dtype", "iters", "sets(MiB)", "time(ms)",
                     "TFLOPS", "%peak", "GB/s", "FLOP/B", "check");
  std::vector<SlowestDevice> slowest = FindSlowestDevices(results);
  for (const GemmResult& r : results) {
    std::string dtype = r.dtype_used == r.dtype_requested ? r.dtype_used : r.dtype_used + "(" + r.dtype_requested + ")";
    std::string percent = r.peak_tflops > 0 ? fmt::format("{:.1f}", r.percent_of_peak) : "-";
    std::string mark;
    for (const SlowestDevice& s : slowest) {
      if (s.shape == ShapeKey(r) && s.rank == r.rank) mark = s.flagged ? "  <- SLOW" : "  <- slowest";
    }
    std::string sets = fmt::format("{}({})", r.rotation_sets, r.rotation_bytes >> 20);
    // Small CPU problems run at a few GFLOPS: keep four significant-ish digits there.
    std::string tflops = r.tflops >= 1 ? fmt::format("{:.2f}", r.tflops) : fmt::format("{:.4f}", r.tflops);
    out += name_cell(r.shape.name);
    out += fmt::format("{:>4}  {:<10}  {:<{}}  {:>6}  {:>6}  {:>6}  {}{}  {:<9}  {:>6}  {:>10}  {:>9.3f}  {:>8}  {:>6}  {:>8.1f}  {:>7.1f}  {}{}\n",
                       r.rank, r.host.substr(0, 10), r.device.substr(0, device_width), device_width, r.shape.m, r.shape.n,
                       r.shape.k, r.shape.trans_a ? 'T' : 'N', r.shape.trans_b ? 'T' : 'N', dtype, r.timing.iterations, sets,
                       r.timing.mean_ms,
                       tflops, percent, r.bandwidth_gbs, r.arithmetic_intensity, CheckText(r.check), mark);
  }
  std::set<std::string> notes;
  for (const GemmResult& r : results) {
    if (!r.note.empty() && notes.insert(r.note).second) out += "note: " + r.note + "\n";
    if (r.peak_tflops == 0 && r.device_id.empty() && notes.insert("cpu peak").second) {
      out += "note: no peak is known for CPUs, so no percent of peak\n";
    }
    if (!r.check.passed && r.check.performed) {
      out += fmt::format("error: rank {} ({}) {} {}: {} (max error {:.3g}, tolerance {:.3g})\n", r.rank, r.device,
                         r.shape.Describe(), r.dtype_used, r.check.first_wrong, r.check.max_error, r.check.tolerance);
    }
  }
  for (const SlowestDevice& s : slowest) {
    out += fmt::format("{} {}: slowest is rank {} on {} ({}): {:.2f} TFLOPS, {:.1f}% below the median {:.2f}\n",
                       s.flagged ? "warning: slow GPU:" : "slowest", s.shape, s.rank, s.host, s.device, s.tflops,
                       s.median_tflops > 0 ? 100 * (1 - s.tflops / s.median_tflops) : 0.0, s.median_tflops);
  }
  return out;
}

namespace {

// The columns of one GEMM result in every tabular format (standard output's
// CSV, and .md/.csv/.tsv files): the names of its JSON (GemmResultToJson),
// the check object's fields as check_<field>.
const std::vector<std::string>& GemmColumns() {
  static const std::vector<std::string> columns = {
      "rank",          "host",          "device",          "device_id",      "library",   "m",
      "n",             "k",             "trans_a",         "trans_b",        "dtype_requested",
      "dtype_used",    "iterations",    "mean_ms",         "min_ms",         "median_ms", "max_ms",
      "tflops",        "peak_tflops",   "percent_of_peak", "bandwidth_gbs",  "arithmetic_intensity",
      "rotation_sets", "rotation_bytes", "algorithm",      "check_passed",   "check_mode", "check_max_error",
      "name"};
  return columns;
}

std::vector<std::string> GemmCells(const GemmResult& r) {
  return {std::to_string(r.rank),
          r.host,
          r.device,
          r.device_id,
          r.library,
          std::to_string(r.shape.m),
          std::to_string(r.shape.n),
          std::to_string(r.shape.k),
          r.shape.trans_a ? "1" : "0",
          r.shape.trans_b ? "1" : "0",
          r.dtype_requested,
          r.dtype_used,
          std::to_string(r.timing.iterations),
          fmt::format("{:.6f}", r.timing.mean_ms),
          fmt::format("{:.6f}", r.timing.min_ms),
          fmt::format("{:.6f}", r.timing.median_ms),
          fmt::format("{:.6f}", r.timing.max_ms),
          fmt::format("{:.4f}", r.tflops),
          fmt::format("{}", r.peak_tflops),
          fmt::format("{:.3f}", r.percent_of_peak),
          fmt::format("{:.3f}", r.bandwidth_gbs),
          fmt::format("{:.3f}", r.arithmetic_intensity),
          std::to_string(r.rotation_sets),
          std::to_string(r.rotation_bytes),
          r.algorithm,
          r.check.passed ? "1" : "0",
          r.check.mode,
          fmt::format("{:.3g}", r.check.max_error),
          r.shape.name};
}

}  // namespace

std::string FormatGemmCsv(const std::vector<GemmResult>& results) {
  ReportDocument table;
  table.header = GemmColumns();
  for (const GemmResult& r : results) table.rows.push_back(GemmCells(r));
  return FormatReportDocument(table, ReportFileFormat::kCsv, /*continuing=*/false);
}

nlohmann::ordered_json GemmReportJson(const std::vector<GemmResult>& results) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const GemmResult& r : results) list.push_back(GemmResultToJson(r));
  nlohmann::ordered_json slowest = nlohmann::ordered_json::array();
  for (const SlowestDevice& s : FindSlowestDevices(results)) {
    slowest.push_back({{"shape", s.shape}, {"rank", s.rank}, {"host", s.host}, {"device", s.device},
                       {"tflops", s.tflops}, {"median_tflops", s.median_tflops}, {"flagged", s.flagged}});
  }
  return {{"tool", "primus-cli benchmark gemm"}, {"primus_version", PRIMUS_VERSION}, {"results", list}, {"slowest", slowest}};
}

ReportDocument GemmReportDocument(const std::vector<GemmResult>& results, const std::string& title,
                                  const std::vector<std::string>& settings) {
  ReportDocument doc;
  doc.title = title;
  doc.settings = settings;
  std::set<std::string> libraries;
  for (const GemmResult& r : results) libraries.insert(r.library);
  for (const std::string& library : libraries) doc.settings.push_back("library: " + library);
  doc.header = GemmColumns();
  for (const GemmResult& r : results) {
    doc.rows.push_back(GemmCells(r));
    doc.records.push_back(GemmResultToJson(r));
  }
  doc.json = GemmReportJson(results);
  return doc;
}

PlotSpec GemmPlot(const std::vector<GemmResult>& results) {
  PlotSpec plot;
  plot.title = "GEMM throughput" + (results.empty() ? std::string() : " (" + results.front().dtype_used + ")");
  plot.x_label = "M = N = K";
  plot.y_label = "TFLOPS";
  std::map<int, PlotSeries> by_rank;
  for (const GemmResult& r : results) {
    PlotSeries& series = by_rank[r.rank];
    if (series.name.empty()) series.name = fmt::format("rank {} {}", r.rank, r.device.substr(0, 20));
    series.points.emplace_back(static_cast<double>(r.shape.m), r.tflops);
  }
  for (auto& [rank, series] : by_rank) plot.series.push_back(series);
  return plot;
}

}  // namespace primus::benchmark
