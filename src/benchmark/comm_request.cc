#include "benchmark/comm_request.h"

#include <cmath>

#include "util/strings.h"

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
      {{"--op"}, K::kValue, "OP", "", "allreduce|allgather|reducescatter|alltoall|broadcast|sendrecv|all (default allreduce)"},
      {{"-b", "--minbytes"}, K::kValue, "SIZE", "", "smallest size, bytes with K/M/G (default 32M)"},
      {{"-e", "--maxbytes"}, K::kValue, "SIZE", "", "largest size (default 32M)"},
      {{"-f", "--stepfactor"}, K::kValue, "FACTOR", "", "multiply the size by this between rows (default 1: add -i)"},
      {{"-i", "--stepbytes"}, K::kValue, "SIZE", "", "add this between rows when -f is 1 (default 1M)"},
      {{"-n", "--iters"}, K::kValue, "N", "", "timed iterations per row (default 20)"},
      {{"-w", "--warmup-iters"}, K::kValue, "N", "", "warm-up iterations (default 5)"},
      {{"-c", "--check"}, K::kValue, "N", "", "check the results N times per row; 0 turns checking off (default 1)"},
      {{"-d", "--datatype"}, K::kValue, "TYPE", "", "float|half|bfloat16|double|int8|uint8|int32|uint32|int64|uint64 (default float)"},
      {{"-r", "--root"}, K::kValue, "RANK", "", "broadcast root (default 0)"},
      {{"--json"}, K::kFlag, "", "", "print JSON instead of the nccl-tests table"},
      {{"--plot"}, K::kValue, "FILE.svg", "", "draw bus bandwidth against size"},
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
  auto count_option = [](const ParsedOption& option, int lowest) -> Result<int> {
    auto value = ParseInt(option.value);
    if (!value || *value < lowest || *value > 1000000) {
      return UsageError("option " + option.written + " must be a count from " + std::to_string(lowest) + " to 1000000, not '" +
                            option.value + "'",
                        "write e.g. " + option.written + " 20");
    }
    return static_cast<int>(*value);
  };
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
      auto op = ParseCollective(option.value);
      if (!op) {
        return UsageError("unknown --op '" + option.value + "'" + DidYouMean(ToLower(option.value), OpNames()),
                          "choose one of " + Join(OpNames(), ", "));
      }
      request.ops = {*op};
    } else if (name == "-b" || name == "-e" || name == "-i") {
      auto size = size_option(option);
      if (!size.ok()) return size.error();
      (name == "-b" ? request.min_bytes : name == "-e" ? request.max_bytes : request.step_bytes) = *size;
    } else if (name == "-f") {
      auto factor = count_option(option, 1);
      if (!factor.ok()) return factor.error();
      request.step_factor = static_cast<size_t>(*factor);
    } else if (name == "-n") {
      auto value = count_option(option, 1);
      if (!value.ok()) return value.error();
      request.iters = *value;
    } else if (name == "-w" || name == "-c" || name == "-r") {
      auto value = count_option(option, 0);
      if (!value.ok()) return value.error();
      (name == "-w" ? request.warmup : name == "-c" ? request.check : request.root) = *value;
    } else if (name == "-d") {
      auto type = ParseDataType(option.value);
      if (!type) {
        return UsageError("unknown -d/--datatype '" + option.value + "'" + DidYouMean(ToLower(option.value), DataTypeNames()),
                          "choose one of " + Join(DataTypeNames(), ", "));
      }
      request.type = *type;
    } else if (name == "--json") {
      request.json = option.value == "true";
    } else if (name == "--plot") {
      if (Status status = CheckSvgPlotPath(option.value, "--plot busbw.svg"); !status) return status.error();
      request.plot = option.value;
    } else if (name == "--device") {
      auto device = ParseDeviceChoice(option.value);
      if (!device.ok()) return device.error();
      request.device = *device;
    }
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
