// The command line of `benchmark gemm`, checked once (usage errors name the
// flag), and the plan it turns into for the device that will run it: the
// shapes (one, or the --sweep sizes), iterations or a duration, warm-up, and
// the defaults that differ between GPUs and the CPU (size 8192 vs 1024,
// 100 vs 10 iterations). The worker processes parse the same arguments, so
// what the user typed is what every rank runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/gemm_problem.h"
#include "benchmark/request_flags.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::benchmark {

enum class ReportFormat { kTable, kCsv, kJson };

struct GemmRequest {
  int64_t m = 0, n = 0, k = 0;  // 0: not given
  GemmDtype dtype = GemmDtype::kBf16;
  bool trans_a = false, trans_b = false;
  int iters = 0;          // 0: the device's default
  double duration_s = 0;  // > 0: time-boxed instead of a count
  int warmup = -1;        // -1: the device's default
  bool sweep = false;
  bool tune = false;
  ReportFormat output = ReportFormat::kTable;
  std::string plot;  // an .svg file, "" for none
  DeviceChoice device = DeviceChoice::kAuto;
};

const std::vector<OptionSpec>& GemmOptions();
// args: the task arguments after "gemm".
Result<GemmRequest> ParseGemmRequest(const std::vector<std::string>& args);

struct GemmPlan {
  std::vector<GemmShape> shapes;
  GemmDtype dtype = GemmDtype::kBf16;
  int iters = 0;
  double duration_s = 0;
  int warmup = 0;
  bool tune = false;
};

inline constexpr int64_t kDefaultGpuSize = 8192;
inline constexpr int64_t kDefaultCpuSize = 1024;

GemmPlan PlanGemm(const GemmRequest& request, bool on_gpu);

}  // namespace primus::benchmark
