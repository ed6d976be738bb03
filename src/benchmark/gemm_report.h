// The report of `benchmark gemm` on stdout, from every rank's results: a
// table (default), CSV or JSON, one row per shape and device, with the dtype
// really used, time, TFLOPS, percent of the device's peak, bandwidth,
// arithmetic intensity and the check. With several devices the slowest one
// of each shape is named, and flagged when it is more than 5% below the
// median (a GPU to look at). --plot draws TFLOPS against size.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmark/gemm_result.h"
#include "benchmark/report_file.h"
#include "util/svg_chart.h"

namespace primus::benchmark {

inline constexpr double kSlowDeviceMargin = 0.05;

// Per shape with at least two devices: the slowest, and whether it is
// below the median by more than kSlowDeviceMargin.
struct SlowestDevice {
  std::string shape;
  int rank = 0;
  std::string host;
  std::string device;
  double tflops = 0;
  double median_tflops = 0;
  bool flagged = false;
};
std::vector<SlowestDevice> FindSlowestDevices(const std::vector<GemmResult>& results);

std::string FormatGemmTable(const std::vector<GemmResult>& results);
std::string FormatGemmCsv(const std::vector<GemmResult>& results);
nlohmann::ordered_json GemmReportJson(const std::vector<GemmResult>& results);
// --output's content: one row per shape and device, the columns of --csv,
// named as the JSON's fields (mean_ms, tflops, bandwidth_gbs, ...).
ReportDocument GemmReportDocument(const std::vector<GemmResult>& results, const std::string& title,
                                  const std::vector<std::string>& settings);
PlotSpec GemmPlot(const std::vector<GemmResult>& results);

}  // namespace primus::benchmark
