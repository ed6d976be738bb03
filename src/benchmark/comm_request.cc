#include "benchmark/comm_request.h"

#include <algorithm>
#include <cmath>

#include "benchmark/report_file.h"
#include "util/strings.h"
#include "util/svg_chart.h"

namespace primus::benchmark {
namespace {

using K = OptionSpec::Kind;

std::vector<std::string> OpNames() {
  std::vector<std::string> names;
  for (Collective op : AllCollectives()) names.emplace_back(CollectiveName(op));
  names.push_back("all");
  return names;
}

}  // namespace

const std::vector<OptionSpec>& CommOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--op"}, K::kValue, "OP[,OP]", "",
       "allreduce|allgather|reducescatter|alltoall|broadcast|sendrecv, a comma list, or all (default allreduce)"},
      {{"--sizes"}, K::kValue, "SIZE,SIZE", "", "exactly these sizes (K/M/G), instead of a --min-bytes to --max-bytes range"},
      {{"--min-bytes", "-b", "--minbytes"}, K::kValue, "SIZE", "", "smallest size, bytes with K/M/G (default 32M)"},
      {{"--max-bytes", "-e", "--maxbytes"}, K::kValue, "SIZE", "", "largest size (default 32M)"},
      {{"--step-factor", "-f", "--stepfactor"}, K::kValue, "FACTOR", "", "multiply the size by this between rows (default 1: add --step-bytes)"},
      {{"--step-bytes", "-i", "--stepbytes"}, K::kValue, "SIZE", "", "add this between rows when -f is 1 (default 1M)"},
      {{"--iters", "-n"}, K::kValue, "N", "", "timed iterations per row (default 20)"},
      {{"--warmup", "-w", "--warmup-iters"}, K::kValue, "N", "", "warm-up iterations (default 5)"},
      {{"-c", "--check"}, K::kValue, "N", "", "check the results N times per row; 0 turns checking off (default 1)"},
      {{"--dtype", "-d", "--datatype"}, K::kValue, "TYPE", "",
       "fp32|fp16|bf16|fp64|int8|uint8|int32|uint32|int64|uint64, or nccl-tests' float|half|bfloat16|double "
       "(default fp32)"},
      {{"-r", "--root"}, K::kValue, "RANK", "", "broadcast root (default 0)"},
      {{"--stride"}, K::kValue, "N", "", "N groups of every Nth rank (r, r+N, r+2N ...), each one running the collectives"},
      {{"--parallel-groups"}, K::kFlag, "", "", "with --stride: every group at once (default: one group after the other)"},
      {{"--json"}, K::kFlag, "", "", "JSON on standard output instead of the nccl-tests table"},
      {{"--plot"}, K::kValue, "FILE.svg", "", "draw bus bandwidth against size"},
      {{"--output", "--output-file"}, K::kValue, "FILE", "", "also write the results to FILE: .md, .csv, .tsv, .json or .jsonl"},
      {{"--append"}, K::kFlag, "", "", "add the rows to an existing --output file"},
      {{"--device"}, K::kValue, "auto|cpu|gpu", "", "gloo on the CPU or NCCL/RCCL on GPUs (default: GPUs when the host has any)"},
  };
  return table;
}

std::optional<size_t> ParseByteSize(std::string_view text) {
  std::string value(Trim(text));
  if (value.empty()) return std::nullopt;
  double unit = 1;
  char last = value.back();
  if (last == 'K' || last == 'k') unit = 1024.0;
  else if (last == 'M' || last == 'm') unit = 1024.0 * 1024;
  else if (last == 'G' || last == 'g') unit = 1024.0 * 1024 * 1024;
  if (unit != 1) value.pop_back();
  auto number = ParseDouble(value);
  if (!number || *number < 0 || !std::isfinite(*number)) return std::nullopt;
  return static_cast<size_t>(*number * unit);
}

Result<CommRequest> ParseCommRequest(const std::vector<std::string>& args) {
  auto parsed = ParseOptions(args, 0, {&CommOptions()}, UnknownOptionPolicy::kReject, "benchmark comm");
  if (!parsed.ok()) return parsed.error();
  if (parsed->next < args.size()) {
    return UsageError("unexpected argument '" + args[parsed->next] + "' for benchmark comm", "see benchmark --help");
  }
  CommRequest request;
  bool sizes_given = false;
  std::string range_given_with;  // -b, -e, -f or -i as written
  std::string output_written;    // --output or --output-file
  auto size_option = [](const ParsedOption& option) -> Result<size_t> {
    auto value = ParseByteSize(option.value);
    if (!value) {
      return UsageError("option " + option.written + " must be a size in bytes (with K, M or G), not '" + option.value + "'",
                        "write e.g. " + option.written + " 128M");
    }
    return *value;
  };
  for (const ParsedOption& option : parsed->options) {
    const std::string& name = option.spec->names.front();
    if (name == "--op") {
      if (ToLower(option.value) == "all") {
        request.ops = AllCollectives();
        continue;
      }
      request.ops.clear();
      for (const std::string& word : Split(option.value, ',')) {
        auto op = ParseCollective(Trim(word));
        if (!op) {
          return UsageError("unknown --op '" + word + "'" + DidYouMean(ToLower(Trim(word)), OpNames()),
                            "choose one of " + Join(OpNames(), ", ") + ", or several separated by commas");
        }
        if (std::find(request.ops.begin(), request.ops.end(), *op) == request.ops.end()) request.ops.push_back(*op);
      }
    } else if (name == "--sizes") {
      request.sizes.clear();
      for (const std::string& word : Split(option.value, ',')) {
        if (Trim(word).empty()) continue;
        auto size = ParseByteSize(word);
        if (!size) {
          return UsageError("option " + option.written + ": '" + word + "' is not a size in bytes (with K, M or G)",
                            "write e.g. " + option.written + " 1M,64M,1G");
        }
        request.sizes.push_back(*size);
      }
      if (request.sizes.empty()) return UsageError("option " + option.written + " needs at least one size", "write e.g. --sizes 1M,64M");
      sizes_given = true;
    } else if (name == "--min-bytes" || name == "--max-bytes" || name == "--step-bytes") {
      auto size = size_option(option);
      if (!size.ok()) return size.error();
      (name == "--min-bytes" ? request.min_bytes : name == "--max-bytes" ? request.max_bytes : request.step_bytes) = *size;
      range_given_with = option.written;
    } else if (name == "--step-factor") {
      range_given_with = option.written;
      auto factor = CountOption(option, 1);
      if (!factor.ok()) return factor.error();
      request.step_factor = static_cast<size_t>(*factor);
    } else if (name == "--iters") {
      auto value = CountOption(option, 1);
      if (!value.ok()) return value.error();
      request.iters = *value;
    } else if (name == "--warmup" || name == "-c" || name == "-r") {
      auto value = CountOption(option, 0);
      if (!value.ok()) return value.error();
      (name == "--warmup" ? request.warmup : name == "-c" ? request.check : request.root) = *value;
    } else if (name == "--dtype") {
      auto type = ParseDataType(option.value);
      if (!type) {
        return UsageError("unknown " + option.written + " '" + option.value + "'" + DidYouMean(ToLower(option.value), DataTypeNames()),
                          "choose one of " + Join(DataTypeNames(), ", "));
      }
      request.type = *type;
    } else if (name == "--stride") {
      auto value = CountOption(option, 1);
      if (!value.ok()) return value.error();
      request.stride = *value;
    } else if (name == "--parallel-groups") {
      request.parallel_groups = option.value == "true";
    } else if (name == "--json") {
      request.json = option.value == "true";
    } else if (name == "--plot") {
      if (Status status = CheckSvgPlotPath(option.value, "--plot busbw.svg"); !status) return status.error();
      request.plot = option.value;
    } else if (name == "--output") {
      request.output_file = option.value;
      output_written = option.written;
    } else if (name == "--append") {
      request.append = option.value == "true";
    } else if (name == "--device") {
      auto device = ParseDeviceChoice(option.value);
      if (!device.ok()) return device.error();
      request.device = *device;
    }
  }
  if (request.parallel_groups && request.stride == 0) {
    return UsageError("--parallel-groups needs --stride N (the groups)", "write --stride 8 --parallel-groups");
  }
  if (request.stride > 0 && (request.json || !request.plot.empty() || !request.output_file.empty())) {
    return UsageError("--stride prints one table per group: --json, --plot and --output take a single group's results",
                      "drop --json/--plot/--output, or drop --stride");
  }
  if (request.append && request.output_file.empty()) {
    return UsageError("--append needs --output FILE", "write --output comm.csv --append");
  }
  if (!request.output_file.empty()) {  // before anything runs: a .json cannot be appended to
    auto format = ReportFileFormatFor(request.output_file, request.append, output_written);
    if (!format.ok()) return format.error();
  }
  if (sizes_given && !range_given_with.empty()) {
    return UsageError("--sizes lists the sizes: " + range_given_with + " cannot be given with it",
                      "drop " + range_given_with + ", or drop --sizes to sweep -b to -e");
  }
  if (sizes_given) {
    // The header's minBytes/maxBytes (and the JSON's) describe the list.
    request.min_bytes = *std::min_element(request.sizes.begin(), request.sizes.end());
    request.max_bytes = *std::max_element(request.sizes.begin(), request.sizes.end());
    return request;
  }
  if (request.min_bytes > request.max_bytes) {
    return UsageError("-b (" + std::to_string(request.min_bytes) + ") is larger than -e (" + std::to_string(request.max_bytes) + ")",
                      "give -b <= -e");
  }
  if (request.step_factor <= 1 && request.step_bytes == 0 && request.min_bytes != request.max_bytes) {
    return UsageError("-i 0 with -f 1 never reaches -e", "give -f 2 (or another factor), or -i > 0");
  }
  return request;
}

std::vector<size_t> RowSizes(const CommRequest& request) {
  if (!request.sizes.empty()) return request.sizes;
  std::vector<size_t> sizes;
  for (size_t size = request.min_bytes; size <= request.max_bytes;
       size = request.step_factor > 1 ? size * request.step_factor : size + request.step_bytes) {
    sizes.push_back(size);
    if (request.step_factor > 1 && size == 0) break;  // 0 * factor never grows
    if (request.step_factor <= 1 && request.step_bytes == 0) break;
  }
  return sizes;
}

}  // namespace primus::benchmark
