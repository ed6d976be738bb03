#include "benchmark/gemm_request.h"

#include "benchmark/report_file.h"
#include "util/strings.h"
#include "util/svg_chart.h"

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

bool IsDeprecatedFormat(const std::string& output_value) {
  std::string value = ToLower(output_value);
  return value == "table" || value == "csv" || value == "json";
}

std::string DeprecatedFormatNote(const std::string& written, const std::string& value) {
  std::string format = ToLower(value);
  std::string instead = format == "json" ? "--json" : format == "csv" ? "--csv" : "no flag (the table is the default)";
  return written + " " + value + " is deprecated: use " + instead + " (" + written +
         " FILE writes the report to a file: .md, .csv, .tsv, .json or .jsonl)";
}

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
      {{"--json"}, K::kFlag, "", "", "the report as JSON on standard output instead of the table"},
      {{"--csv"}, K::kFlag, "", "", "the report as CSV on standard output instead of the table"},
      {{"--plot"}, K::kValue, "FILE.svg", "", "draw TFLOPS against size"},
      {{"--device"}, K::kValue, "auto|cpu|gpu", "", "where to run (default: GPUs when the host has any)"},
      {{"--shape"}, K::kValue, "[NAME=]MxNxK[:OP]", "", "run exactly this problem (OP: NN|NT|TN|TT); repeat for a list", true},
      {{"--output", "--output-file"}, K::kValue, "FILE", "", "also write the report to FILE: .md, .csv, .tsv, .json or .jsonl"},
      {{"--append"}, K::kFlag, "", "", "add the rows to an existing --output FILE"},
  };
  return table;
}

Result<GemmShape> ParseGemmShape(const std::string& text, const std::string& flag) {
  auto fail = [&](const std::string& why) {
    return UsageError(flag + " '" + text + "': " + why, "write e.g. " + flag + " 8192x8192x4096 or " + flag + " qkv=12288x2048x4096:TN");
  };
  GemmShape shape;
  std::string rest = text;
  if (size_t equals = rest.find('='); equals != std::string::npos) {
    shape.name = rest.substr(0, equals);
    rest = rest.substr(equals + 1);
    if (shape.name.empty() || shape.name.find_first_of(" \t,") != std::string::npos) return fail("a name has no spaces or commas");
  }
  if (size_t colon = rest.find(':'); colon != std::string::npos) {
    std::string op = ToUpper(rest.substr(colon + 1));
    if (op.size() != 2 || (op[0] != 'N' && op[0] != 'T') || (op[1] != 'N' && op[1] != 'T')) return fail("OP is NN, NT, TN or TT");
    shape.trans_a = op[0] == 'T';
    shape.trans_b = op[1] == 'T';
    rest = rest.substr(0, colon);
  }
  std::vector<std::string> sizes = Split(ToLower(rest), 'x');
  if (sizes.size() != 3) return fail("expected MxNxK");
  int64_t* fields[] = {&shape.m, &shape.n, &shape.k};
  for (size_t i = 0; i < 3; ++i) {
    auto value = ParseInt(sizes[i]);
    if (!value || *value < 1 || *value > (int64_t{1} << 20)) return fail("each size is a number from 1 to 1048576");
    *fields[i] = *value;
  }
  return shape;
}

std::string GemmShapeArgument(const GemmShape& shape) {
  return (shape.name.empty() ? "" : shape.name + "=") + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
         std::to_string(shape.k) + ":" + (shape.trans_a ? "T" : "N") + (shape.trans_b ? "T" : "N");
}

Result<GemmRequest> ParseGemmRequest(const std::vector<std::string>& args) {
  auto parsed = ParseOptions(args, 0, {&GemmOptions()}, UnknownOptionPolicy::kReject, "benchmark gemm");
  if (!parsed.ok()) return parsed.error();
  if (parsed->next < args.size()) {
    return UsageError("unexpected argument '" + args[parsed->next] + "' for benchmark gemm", "see benchmark --help");
  }
  GemmRequest request;
  bool sizes_n_or_k = false;
  std::string single_shape_flag;  // -M/-N/-K/--sweep/--trans-* as written
  std::string output_flag;        // --output or --output-file, as written
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
      auto value = CountOption(option, name == "--iters" ? 1 : 0);
      if (!value.ok()) return value.error();
      (name == "--iters" ? request.iters : request.warmup) = *value;
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
    } else if (name == "--json" || name == "--csv") {
      if (option.value == "true") request.output = name == "--json" ? ReportFormat::kJson : ReportFormat::kCsv;
      else if (request.output == (name == "--json" ? ReportFormat::kJson : ReportFormat::kCsv)) request.output = ReportFormat::kTable;
    } else if (name == "--output" && IsDeprecatedFormat(option.value)) {
      std::string format = ToLower(option.value);
      request.output = format == "json" ? ReportFormat::kJson : format == "csv" ? ReportFormat::kCsv : ReportFormat::kTable;
      request.warnings.push_back(DeprecatedFormatNote(option.written, option.value));
    } else if (name == "--plot") {
      Status plot = CheckSvgPlotPath(option.value, "--plot tflops.svg (convert to PNG with rsvg-convert if needed)");
      if (!plot) return plot.error();
      request.plot = option.value;
    } else if (name == "--device") {
      auto device = ParseDeviceChoice(option.value);
      if (!device.ok()) return device.error();
      request.device = *device;
    } else if (name == "--shape") {
      auto shape = ParseGemmShape(option.value, option.written);
      if (!shape.ok()) return shape.error();
      request.shapes.push_back(*shape);
    } else if (name == "--output") {
      request.output_file = option.value;
      output_flag = option.written;
    } else if (name == "--append") {
      request.append = option.value == "true";
    }
    if (name == "-M" || name == "-N" || name == "-K" || name == "--sweep" || name == "--trans-a" || name == "--trans-b") {
      single_shape_flag = option.written;
    }
  }
  if (!request.shapes.empty() && !single_shape_flag.empty()) {
    return UsageError("--shape gives the problems: " + single_shape_flag + " cannot be given with it",
                      "put the sizes and OP into --shape MxNxK:OP, or drop --shape");
  }
  if (!request.output_file.empty()) {
    auto format = ReportFileFormatFor(request.output_file, request.append, output_flag);
    if (!format.ok()) return format.error();
  } else if (request.append) {
    return UsageError("--append needs --output FILE", "write --output report.csv --append");
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
  if (!request.shapes.empty()) {
    plan.shapes = request.shapes;
  } else if (request.sweep) {
    for (int64_t size : SweepSizes(m)) plan.shapes.push_back({size, size, size, request.trans_a, request.trans_b});
  } else {
    plan.shapes.push_back({m, request.n > 0 ? request.n : m, request.k > 0 ? request.k : m, request.trans_a, request.trans_b});
  }
  return plan;
}

}  // namespace primus::benchmark
