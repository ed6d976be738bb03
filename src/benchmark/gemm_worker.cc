#include "benchmark/gemm_worker.h"

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "benchmark/comm_worker.h"
#include "benchmark/gemm_cpu.h"
#include "benchmark/gemm_gpu.h"
#include "benchmark/gemm_request.h"
#include "benchmark/progress_file.h"
#include "platform/host_detect.h"
#include "platform/roots.h"
#include "util/files.h"
#include "util/log.h"
#include "util/option_parser.h"
#include "util/environment.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

using K = OptionSpec::Kind;

const std::vector<OptionSpec>& WorkerOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--result-dir"}, K::kValue, "DIR", "", "where rank<RANK>.json goes"},
      {{"--engine"}, K::kValue, "cpu|nvidia|amd", "", "the GEMM library family"},
  };
  return table;
}

// Waits until `count` ranks created DIR/ready.<rank>.
Status LocalBarrier(const std::string& dir, int rank, int count, double timeout_s) {
  if (Status written = WriteFileAtomic(fmt::format("{}/ready.{}", dir, rank), ""); !written.ok()) return written;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int ready = 0;
    for (int r = 0; r < count; ++r) ready += PathExists(fmt::format("{}/ready.{}", dir, r)) ? 1 : 0;
    if (ready >= count) return Status::Ok();
    if (std::chrono::steady_clock::now() > deadline) {
      return TaskError(fmt::format("only {} of {} local ranks got ready within {} s", ready, count, timeout_s),
                       "another rank failed to open its GPU: look at its log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

std::vector<std::string> GemmWorkerArgs(const std::string& result_dir, const std::string& engine,
                                        const std::vector<std::string>& user_args) {
  std::vector<std::string> args = {"--result-dir", result_dir, "--engine", engine, "--"};
  args.insert(args.end(), user_args.begin(), user_args.end());
  return args;
}

std::string GemmProgressFile(const std::string& result_dir) { return result_dir + "/progress"; }

int RunGemmWorker(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env = ProcessEnvironment();
  int rank = env.count("RANK") ? static_cast<int>(ParseInt(env["RANK"]).value_or(0)) : 0;
  auto fail = [&](const Error& error) {
    log::Error("rank {}: {}", rank, error.message);
    if (!error.hint.empty()) log::Error("hint: {}", error.hint);
    return static_cast<int>(error.code);
  };
  auto parsed = ParseOptions(args, 0, {&WorkerOptions()}, UnknownOptionPolicy::kReject, "benchmark worker gemm");
  if (!parsed.ok()) return fail(parsed.error());
  std::string result_dir, engine_name;
  for (const ParsedOption& option : parsed->options) {
    if (option.spec->names.front() == "--result-dir") result_dir = option.value;
    else engine_name = option.value;
  }
  if (result_dir.empty() || (engine_name != "cpu" && engine_name != "nvidia" && engine_name != "amd")) {
    return fail(UsageError("benchmark worker gemm needs --result-dir DIR and --engine cpu|nvidia|amd",
                           "the worker is started by `benchmark gemm`, not by hand"));
  }
  std::vector<std::string> user_args(args.begin() + static_cast<long>(parsed->next), args.end());
  auto request = ParseGemmRequest(user_args);
  if (!request.ok()) return fail(request.error());
  int local_rank = env.count("LOCAL_RANK") ? static_cast<int>(ParseInt(env["LOCAL_RANK"]).value_or(0)) : 0;
  int local_world = env.count("LOCAL_WORLD_SIZE") ? static_cast<int>(ParseInt(env["LOCAL_WORLD_SIZE"]).value_or(1)) : 1;

  bool on_gpu = engine_name != "cpu";
  platform::HostInfo host = platform::DetectHost(platform::Roots::FromEnvironment());
  auto engine = on_gpu ? OpenGpuGemmEngine(engine_name == "nvidia" ? GpuVendor::kNvidia : GpuVendor::kAmd, local_rank, host)
                       : OpenCpuGemmEngine(host.cpu_model);
  if (!engine.ok()) return fail(engine.error());
  if (Status ready = LocalBarrier(result_dir, local_rank, local_world, RendezvousTimeout(env)); !ready.ok()) {
    return fail(ready.error());
  }

  GemmPlan plan = PlanGemm(*request, on_gpu);
  GemmRunOptions settings{plan.iters, plan.duration_s, plan.warmup, plan.tune, 1};
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  // Local rank 0 says where the node stands; the launching primus-cli shows it.
  std::string progress = local_rank == 0 ? GemmProgressFile(result_dir) : "";
  long total = static_cast<long>(plan.shapes.size());
  for (const GemmShape& shape : plan.shapes) {
    WriteProgressFile(progress, static_cast<long>(results.size()), total, "(" + shape.Describe() + ")");
    auto result = (*engine)->Run(shape, plan.dtype, settings);
    if (!result.ok()) return fail(result.error());
    result->rank = rank;
    result->local_rank = local_rank;
    result->host = log::HostName();
    log::Debug("rank {}: {} {}: {:.3f} ms, {:.2f} TFLOPS", rank, shape.Describe(), result->dtype_used,
               result->timing.mean_ms, result->tflops);
    results.push_back(GemmResultToJson(*result));
  }
  WriteProgressFile(progress, total, total, "");
  nlohmann::ordered_json document = {{"results", results}};
  if (Status written = WriteFileAtomic(fmt::format("{}/rank{}.json", result_dir, rank), document.dump(2) + "\n");
      !written.ok()) {
    return fail(written.error());
  }
  return 0;
}

Result<std::vector<GemmResult>> ReadGemmResults(const std::string& dir) {
  std::vector<std::pair<int, std::string>> files;
  DIR* handle = ::opendir(dir.c_str());
  if (!handle) return TaskError("cannot read the GEMM results directory " + dir);
  while (dirent* entry = ::readdir(handle)) {
    std::string name = entry->d_name;
    if (!name.starts_with("rank") || !name.ends_with(".json")) continue;
    auto rank = ParseInt(name.substr(4, name.size() - 9));
    if (rank) files.emplace_back(static_cast<int>(*rank), dir + "/" + name);
  }
  ::closedir(handle);
  std::sort(files.begin(), files.end());
  std::vector<GemmResult> results;
  for (const auto& [rank, path] : files) {
    auto text = ReadFile(path);
    if (!text.ok()) return text.error();
    nlohmann::json document = nlohmann::json::parse(*text, nullptr, false);
    if (document.is_discarded() || !document.contains("results")) return TaskError(path + " is not a GEMM result file");
    for (const auto& entry : document["results"]) {
      auto result = GemmResultFromJson(entry);
      if (!result.ok()) return result.error();
      results.push_back(*result);
    }
  }
  return results;
}

}  // namespace primus::benchmark
