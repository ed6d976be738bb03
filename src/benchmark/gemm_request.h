// The command line of `benchmark gemm`, checked once (usage errors name the
// flag), and the plan it turns into for the device that will run it: the
// shapes (one, the --sweep sizes, or the --shape list), iterations or a
// duration, warm-up, and
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
  std::vector<GemmShape> shapes;  // --shape: exactly these problems (then no -M/-N/-K/--sweep/--trans-*)
  std::string output_file;        // --output FILE: the report as a file too (report_file.h)
  bool append = false;
  std::vector<std::string> warnings;  // deprecated spellings used; the launching task prints them
};

const std::vector<OptionSpec>& GemmOptions();

// --json/--csv choose the report on stdout and --output FILE names a file;
// `--output table|csv|json` (the format, as it once was) still works, with
// this note. True for those three words.
bool IsDeprecatedFormat(const std::string& output_value);
std::string DeprecatedFormatNote(const std::string& written, const std::string& value);

// --shape's syntax: [NAME=]MxNxK[:OP], OP one of NN NT TN TT (default NN),
// e.g. "attn_qkv.fwd=12288x8192x4096:TN". Errors name `flag`.
Result<GemmShape> ParseGemmShape(const std::string& text, const std::string& flag);
std::string GemmShapeArgument(const GemmShape& shape);  // the same syntax, back
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
