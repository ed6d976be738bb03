#include "benchmark/gemm_request.h"

#include "util/strings.h"

namespace primus::benchmark {
namespace {

using K = OptionSpec::Kind;

Result<int64_t> PositiveSize(const ParsedOption& option) {
  auto value = ParseInt(option.value);
  if (!value || *value < 1 || *value > (int64_t{1} << 20)) {
    return UsageError("option " + option.written + " must be a matrix size from 1 to 1048576, not '" + option.value + "'",
                      "write e.g. " + option.written + " 8192");
  }
  return *value;
}

}  // namespace

const std::vector<OptionSpec>& GemmOptions() {
  static const std::vector<OptionSpec> table = {
      {{"-M", "--M", "--m"}, K::kValue, "M", "", "rows of A and D (default 8192 on GPUs, 1024 on the CPU)"},
      {{"-N", "--N", "--n"}, K::kValue, "N", "", "columns of B and D (default: M)"},
      {{"-K", "--K", "--k"}, K::kValue, "K", "", "the shared dimension (default: M)"},
      {{"--dtype"}, K::kValue, "bf16|fp16|fp32|tf32|fp8", "", "element type (default bf16; the CPU computes fp32)"},
      {{"--trans-a"}, K::kFlag, "", "", "A is stored K x M and used transposed (BLAS column-major)"},
      {{"--trans-b"}, K::kFlag, "", "", "B is stored N x K and used transposed"},
      {{"--iters"}, K::kValue, "N", "", "timed iterations (default 100 on GPUs, 10 on the CPU)"},
      {{"--duration"}, K::kValue, "SECONDS", "", "time the GEMM for this long instead of --iters"},
      {{"--warmup"}, K::kValue, "N", "", "untimed iterations first (default 20 on GPUs, 2 on the CPU)"},
      {{"--sweep"}, K::kFlag, "", "", "square sizes 256, 512, ... up to M"},
      {{"--tune"}, K::kFlag, "", "", "time the library's top candidate algorithms and keep the fastest"},
      {{"--output"}, K::kValue, "table|csv|json", "", "report format on stdout (default table)"},
      {{"--plot"}, K::kValue, "FILE.svg", "", "draw TFLOPS against size"},
      {{"--device"}, K::kValue, "auto|cpu|gpu", "", "where to run (default: GPUs when the host has any)"},
  };
  return table;
}

Result<GemmRequest> ParseGemmRequest(const std::vector<std::string>& args) {
  auto parsed = ParseOptions(args, 0, {&GemmOptions()}, UnknownOptionPolicy::kReject, "benchmark gemm");
  if (!parsed.ok()) return parsed.error();
  if (parsed->next < args.size()) {
    return UsageError("unexpected argument '" + args[parsed->next] + "' for benchmark gemm", "see benchmark --help");
  }
  GemmRequest request;
  bool sizes_n_or_k = false;
  for (const ParsedOption& option : parsed->options) {
    const std::string& name = option.spec->names.front();
    if (name == "-M" || name == "-N" || name == "-K") {
      auto size = PositiveSize(option);
      if (!size.ok()) return size.error();
      (name == "-M" ? request.m : name == "-N" ? request.n : request.k) = *size;
      sizes_n_or_k = sizes_n_or_k || name != "-M";
    } else if (name == "--dtype") {
      auto dtype = ParseGemmDtype(option.value);
      if (!dtype) {
        return UsageError("unknown --dtype '" + option.value + "'" + DidYouMean(option.value, GemmDtypeNames()),
                          "choose one of " + Join(GemmDtypeNames(), ", "));
      }
      request.dtype = *dtype;
    } else if (name == "--trans-a") {
      request.trans_a = option.value == "true";
    } else if (name == "--trans-b") {
      request.trans_b = option.value == "true";
    } else if (name == "--iters" || name == "--warmup") {
      auto value = ParseInt(option.value);
      int64_t lowest = name == "--iters" ? 1 : 0;
      if (!value || *value < lowest || *value > 1000000) {
        return UsageError("option " + option.written + " must be a count from " + std::to_string(lowest) +
                              " to 1000000, not '" + option.value + "'",
                          "write e.g. " + option.written + " 20");
      }
      (name == "--iters" ? request.iters : request.warmup) = static_cast<int>(*value);
    } else if (name == "--duration") {
      auto value = ParseDouble(option.value);
      if (!value || *value <= 0 || *value > 86400) {
        return UsageError("option --duration must be a number of seconds above 0, not '" + option.value + "'",
                          "write e.g. --duration 10");
      }
      request.duration_s = *value;
    } else if (name == "--sweep") {
      request.sweep = option.value == "true";
    } else if (name == "--tune") {
      request.tune = option.value == "true";
    } else if (name == "--output") {
      std::string format = ToLower(option.value);
      if (format == "table") request.output = ReportFormat::kTable;
      else if (format == "csv") request.output = ReportFormat::kCsv;
      else if (format == "json") request.output = ReportFormat::kJson;
      else {
        return UsageError("unknown --output '" + option.value + "'" + DidYouMean(format, {"table", "csv", "json"}),
                          "choose table, csv or json");
      }
    } else if (name == "--plot") {
      Status plot = CheckSvgPlotPath(option.value, "--plot tflops.svg (convert to PNG with rsvg-convert if needed)");
      if (!plot) return plot.error();
      request.plot = option.value;
    } else if (name == "--device") {
      auto device = ParseDeviceChoice(option.value);
      if (!device.ok()) return device.error();
      request.device = *device;
    }
  }
  if (request.iters > 0 && request.duration_s > 0) {
    return UsageError("--iters and --duration exclude each other", "give one of them");
  }
  if (request.sweep && sizes_n_or_k) {
    return UsageError("--sweep runs square sizes up to -M: -N and -K cannot be given with it",
                      "drop -N/-K, or drop --sweep to run one shape");
  }
  return request;
}

GemmPlan PlanGemm(const GemmRequest& request, bool on_gpu) {
  GemmPlan plan;
  plan.dtype = request.dtype;
  plan.tune = request.tune;
  plan.duration_s = request.duration_s;
  plan.iters = request.iters > 0 ? request.iters : request.duration_s > 0 ? 0 : (on_gpu ? 100 : 10);
  plan.warmup = request.warmup >= 0 ? request.warmup : (on_gpu ? 20 : 2);
  int64_t m = request.m > 0 ? request.m : (on_gpu ? kDefaultGpuSize : kDefaultCpuSize);
  if (request.sweep) {
    for (int64_t size : SweepSizes(m)) plan.shapes.push_back({size, size, size, request.trans_a, request.trans_b});
  } else {
    plan.shapes.push_back({m, request.n > 0 ? request.n : m, request.k > 0 ? request.k : m, request.trans_a, request.trans_b});
  }
  return plan;
}

}  // namespace primus::benchmark
