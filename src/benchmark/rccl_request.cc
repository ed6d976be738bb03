#include "benchmark/rccl_request.h"

#include <algorithm>

#include "benchmark/collective.h"
#include "benchmark/comm_data.h"
#include "benchmark/comm_request.h"
#include "benchmark/report_file.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

using K = OptionSpec::Kind;

// Options both translations pass to `benchmark comm` as they are.
const std::vector<OptionSpec>& SharedOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--device"}, K::kValue, "auto|cpu|gpu", "", "gloo on the CPU or NCCL/RCCL on GPUs (default: GPUs when the host has any)"},
  };
  return table;
}

// The element type by any name `benchmark comm --dtype` takes (bfloat16,
// half, float, ...), as bf16, fp16 or fp32: the types these runs support.
Result<std::string> Dtype(const ParsedOption& option) {
  std::optional<DataType> type = ParseDataType(option.value);
  if (type == DataType::kBfloat16) return std::string("bf16");
  if (type == DataType::kHalf) return std::string("fp16");
  if (type == DataType::kFloat) return std::string("fp32");
  return UsageError("option " + option.written + " must be bf16, fp16 or fp32, not '" + option.value + "'" +
                        DidYouMean(ToLower(option.value), {"bf16", "fp16", "fp32"}),
                    "benchmark comm --dtype takes the other types of nccl-tests");
}

// Primus's --op takes several words: `--op all_reduce all_gather` is `--op all_reduce,all_gather`.
std::vector<std::string> JoinOpWords(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    out.push_back(args[i]);
    if (args[i] != "--op" || i + 1 >= args.size()) continue;
    std::string ops = args[++i];
    while (i + 1 < args.size() && !args[i + 1].starts_with("-")) ops += "," + args[++i];
    out.push_back(ops);
  }
  return out;
}

Error Refuse(const ParsedOption& option, const std::string& instead) {
  return UsageError("benchmark rccl: " + option.written + " is not available here", instead);
}

std::string SizeList(const std::vector<size_t>& sizes) {
  std::vector<std::string> words;
  for (size_t size : sizes) words.push_back(std::to_string(size));
  return Join(words, ",");
}

}  // namespace

const std::vector<OptionSpec>& RcclOptions() {
  static const std::vector<OptionSpec> table = [] {
    std::vector<OptionSpec> t = {
        {{"--op"}, K::kValue, "OP [OP...]", "", "all_reduce|broadcast|reduce_scatter|all_gather|alltoall (default all_reduce)"},
        {{"--sizes"}, K::kValue, "SIZE,SIZE", "", "exactly these message sizes (K/M/G), instead of a range"},
        {{"--min-bytes"}, K::kValue, "SIZE", "", "smallest size (default 1K)"},
        {{"--max-bytes"}, K::kValue, "SIZE", "", "largest size (default 128M)"},
        {{"--num-sizes"}, K::kValue, "N", "", "sizes with --scale linear (default 12)"},
        {{"--scale"}, K::kValue, "log2|linear", "", "doubling sizes (default) or N evenly spaced"},
        {{"--dtype"}, K::kValue, "bf16|fp16|fp32", "", "element type (default bf16)"},
        {{"--warmup"}, K::kValue, "N", "", "warm-up iterations (default 20)"},
        {{"--iters"}, K::kValue, "N", "", "timed iterations per size (default 100)"},
        {{"--check"}, K::kFlag, "", "", "check every result (off by default)"},
        {{"--output-file", "--output"}, K::kValue, "FILE", "", "also write the results to FILE: .md, .csv, .tsv, .json or .jsonl"},
        {{"--append"}, K::kFlag, "", "", "add the rows to an existing --output-file"},
        {{"--cluster"}, K::kValue, "LABEL", "", "a label for the --output-file report"},
        {{"--json"}, K::kFlag, "", "", "JSON on standard output instead of the nccl-tests table"},
        {{"--plot"}, K::kValue, "FILE.svg", "", "draw bus bandwidth against size"},
        // Primus's, refused with what to do instead.
        {{"--repeat"}, K::kValue, "N", "", "not here above 1"},
        {{"--aggregate-repeat"}, K::kFlag, "", "", "not here"},
        {{"--per-rank"}, K::kFlag, "", "", "not here"},
        {{"--per-rank-file"}, K::kValue, "FILE", "", "not here"},
        {{"--per-iter-trace"}, K::kFlag, "", "", "not here"},
        {{"--trace-file"}, K::kValue, "FILE", "", "not here"},
        {{"--trace-limit"}, K::kValue, "N", "", "not here"},
        {{"--trace-ops"}, K::kValue, "OPS", "", "not here"},
        {{"--trace-sizes"}, K::kValue, "SIZES", "", "not here"},
    };
    t.insert(t.end(), SharedOptions().begin(), SharedOptions().end());
    for (OptionSpec& spec : t) spec.hidden = spec.help.starts_with("not here");
    return t;
  }();
  return table;
}

const std::vector<OptionSpec>& StridedAllgatherOptions() {
  static const std::vector<OptionSpec> table = [] {
    std::vector<OptionSpec> t = {
        {{"--sizes-mb"}, K::kValue, "MB,MB", "", "per-rank message sizes in MiB (default 64,128,256)"},
        {{"--stride"}, K::kValue, "N", "", "groups of ranks r, r+N, r+2N ... (default 8)"},
        {{"--parallel"}, K::kFlag, "", "", "every group at once (default: one group after the other)"},
        {{"--iters"}, K::kValue, "N", "", "timed iterations per size (default 50)"},
        {{"--warmup"}, K::kValue, "N", "", "warm-up iterations (default 10)"},
        {{"--dtype"}, K::kValue, "bf16|fp16|fp32", "", "element type (default bf16)"},
        {{"--backend"}, K::kValue, "nccl|gloo", "", "nccl: GPUs (NCCL/RCCL), gloo: CPUs (default: as --device)"},
    };
    t.insert(t.end(), SharedOptions().begin(), SharedOptions().end());
    return t;
  }();
  return table;
}

Result<CollectiveTranslation> TranslateRccl(const std::vector<std::string>& raw_args) {
  std::vector<std::string> args = JoinOpWords(raw_args);
  auto parsed = ParseOptions(args, 0, {&RcclOptions()}, UnknownOptionPolicy::kReject, "benchmark rccl");
  if (!parsed.ok()) return parsed.error();
  if (parsed->next < args.size()) {
    return UsageError("unexpected argument '" + args[parsed->next] + "' for benchmark rccl", "see primus-cli benchmark --help");
  }
  CollectiveTranslation out;
  std::string ops = "all_reduce", dtype = "bf16", scale = "log2";
  std::string sizes_text;
  size_t min_bytes = 1024, max_bytes = 128 << 20;
  int num_sizes = 12, warmup = 20, iters = 100;
  bool check = false;
  std::vector<std::string> extra;
  for (const ParsedOption& option : parsed->options) {
    const std::string& name = option.spec->names.front();
    if (name == "--op") {
      ops = option.value;
    } else if (name == "--sizes") {
      sizes_text = option.value;
    } else if (name == "--min-bytes" || name == "--max-bytes") {
      auto size = ParseByteSize(option.value);
      if (!size || *size == 0) {
        return UsageError("option " + option.written + " must be a size in bytes (with K, M or G), not '" + option.value + "'",
                          "write e.g. " + option.written + " 1M");
      }
      (name == "--min-bytes" ? min_bytes : max_bytes) = *size;
    } else if (name == "--num-sizes" || name == "--warmup" || name == "--iters") {
      auto count = CountOption(option, name == "--warmup" ? 0 : 1);
      if (!count.ok()) return count.error();
      (name == "--num-sizes" ? num_sizes : name == "--warmup" ? warmup : iters) = *count;
    } else if (name == "--scale") {
      scale = ToLower(option.value);
      if (scale != "log2" && scale != "linear") {
        return UsageError("option --scale must be log2 or linear, not '" + option.value + "'", "write --scale log2");
      }
    } else if (name == "--dtype") {
      auto value = Dtype(option);
      if (!value.ok()) return value.error();
      dtype = *value;
    } else if (name == "--check") {
      check = option.value == "true";
    } else if (name == "--output-file") {
      out.output_file = option.value;
    } else if (name == "--append") {
      out.append = option.value == "true";
    } else if (name == "--cluster") {
      out.cluster = option.value;
    } else if (name == "--json" || name == "--device" || name == "--plot") {
      extra.push_back(name);
      if (option.spec->kind != K::kFlag) extra.push_back(option.value);
      else if (option.value != "true") extra.back() += "=false";
    } else if (name == "--repeat") {
      auto count = CountOption(option, 1);
      if (!count.ok()) return count.error();
      if (*count > 1) {
        return Refuse(option, "each row is already the mean of --iters iterations; run the benchmark again to compare runs");
      }
    } else if (name == "--aggregate-repeat") {
      if (option.value == "true") return Refuse(option, "--repeat above 1 is not available here, so there is nothing to aggregate");
    } else if (name == "--per-rank" || name == "--per-rank-file") {
      return Refuse(option, "the table's '# Slowest rank' line names the slowest rank of each collective and how far it is "
                            "above the mean rank (--json has it too)");
    } else {
      return Refuse(option, "per-iteration traces are not recorded; each row has the mean time of --iters iterations");
    }
  }
  std::vector<size_t> sizes;
  if (!sizes_text.empty()) {
    for (const std::string& word : Split(sizes_text, ',')) {
      if (Trim(word).empty()) continue;
      auto size = ParseByteSize(word);
      if (!size) {
        return UsageError("option --sizes: '" + word + "' is not a size in bytes (with K, M or G)", "write e.g. --sizes 1K,1M,64M");
      }
      sizes.push_back(*size);
    }
  } else if (min_bytes > max_bytes) {
    return UsageError("--min-bytes is larger than --max-bytes", "give --min-bytes <= --max-bytes");
  } else if (scale == "log2") {
    for (size_t size = min_bytes; size <= max_bytes; size = std::max(size + 1, size * 2)) sizes.push_back(size);
  } else {
    size_t step = std::max<size_t>(1, (max_bytes - min_bytes) / static_cast<size_t>(std::max(1, num_sizes - 1)));
    for (int i = 0; i < num_sizes; ++i) sizes.push_back(min_bytes + static_cast<size_t>(i) * step);
  }
  if (sizes.empty()) return UsageError("benchmark rccl: no message size to run", "give --sizes 1M,64M");
  if (!out.output_file.empty()) {
    auto format = ReportFileFormatFor(out.output_file, out.append, "--output-file");
    if (!format.ok()) return format.error();
  } else if (out.append) {
    return UsageError("--append needs --output-file FILE", "write --output-file rccl_report.csv --append");
  }
  out.comm_args = {"--op", ops, "--sizes", SizeList(sizes), "--dtype", dtype, "--warmup", std::to_string(warmup),
                   "--iters", std::to_string(iters), "-c", check ? "1" : "0"};
  out.comm_args.insert(out.comm_args.end(), extra.begin(), extra.end());
  // The names must be ours: an unknown --op is reported here, with its spelling.
  if (auto request = ParseCommRequest(out.comm_args); !request.ok()) return request.error();
  return out;
}

Result<CollectiveTranslation> TranslateStridedAllgather(const std::vector<std::string>& args) {
  auto parsed = ParseOptions(args, 0, {&StridedAllgatherOptions()}, UnknownOptionPolicy::kReject, "benchmark strided-allgather");
  if (!parsed.ok()) return parsed.error();
  if (parsed->next < args.size()) {
    return UsageError("unexpected argument '" + args[parsed->next] + "' for benchmark strided-allgather",
                      "see primus-cli benchmark --help");
  }
  std::string sizes_mb = "64,128,256", dtype = "bf16", device;
  int stride = 8, iters = 50, warmup = 10;
  bool parallel = false;
  std::string backend;
  for (const ParsedOption& option : parsed->options) {
    const std::string& name = option.spec->names.front();
    if (name == "--sizes-mb") {
      sizes_mb = option.value;
    } else if (name == "--stride" || name == "--iters" || name == "--warmup") {
      auto count = CountOption(option, name == "--warmup" ? 0 : 1);
      if (!count.ok()) return count.error();
      (name == "--stride" ? stride : name == "--iters" ? iters : warmup) = *count;
    } else if (name == "--parallel") {
      parallel = option.value == "true";
    } else if (name == "--dtype") {
      auto value = Dtype(option);
      if (!value.ok()) return value.error();
      dtype = *value;
    } else if (name == "--backend") {
      backend = ToLower(option.value);
      if (backend != "nccl" && backend != "gloo") {
        return UsageError("option --backend must be nccl or gloo here, not '" + option.value + "'",
                          "nccl runs on the GPUs (NCCL/RCCL), gloo on CPUs (--device cpu)");
      }
    } else if (name == "--device") {
      device = ToLower(option.value);
    }
  }
  std::vector<std::string> sizes;
  for (const std::string& word : Split(sizes_mb, ',')) {
    if (Trim(word).empty()) continue;
    auto mb = ParseInt(Trim(word));
    if (!mb || *mb < 1 || *mb > (int64_t{1} << 20)) {
      return UsageError("option --sizes-mb: '" + word + "' is not a whole number of MiB", "write e.g. --sizes-mb 64,128");
    }
    sizes.push_back(std::to_string(*mb) + "M");
  }
  if (sizes.empty()) return UsageError("option --sizes-mb needs at least one size", "write e.g. --sizes-mb 64,128");
  std::string expected = backend == "gloo" ? "cpu" : backend == "nccl" ? "gpu" : "";
  if (!expected.empty() && !device.empty() && device != "auto" && device != expected) {
    return UsageError("--backend " + backend + " runs on the " + (expected == "cpu" ? "CPU" : "GPUs") + ", not --device " + device,
                      "drop one of them");
  }
  if (device.empty() || device == "auto") device = expected.empty() ? "auto" : expected;
  CollectiveTranslation out;
  out.comm_args = {"--op", "allgather", "--sizes", Join(sizes, ","), "--dtype", dtype, "--warmup", std::to_string(warmup),
                   "--iters", std::to_string(iters), "-c", "0", "--stride", std::to_string(stride)};
  if (parallel) out.comm_args.push_back("--parallel-groups");
  if (device != "auto") out.comm_args.insert(out.comm_args.end(), {"--device", device});
  if (auto request = ParseCommRequest(out.comm_args); !request.ok()) return request.error();
  return out;
}

}  // namespace primus::benchmark
