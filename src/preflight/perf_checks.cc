#include "preflight/perf_checks.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/strings.h"
#include "util/subprocess.h"

namespace primus::preflight {
namespace {

const std::string kPerf = "perf";

}  // namespace

CheckResult GemmVerdict(const std::string& name, double tflops, double peak_tflops) {
  if (peak_tflops <= 0) return Pass(kPerf, name, fmt::format("{:.1f} TFLOPS (no peak known for this device)", tflops));
  double share = tflops / peak_tflops;
  std::string value = fmt::format("{:.1f} TFLOPS ({:.0f}% of {:.0f})", tflops, share * 100, peak_tflops);
  if (share < 0.25) {
    return Fail(kPerf, name, value, ">= 50% of peak",
                "far below the device's speed: check clocks and power (rocm-smi / nvidia-smi -q -d CLOCK,POWER), thermal throttling, PCIe");
  }
  if (share < 0.5) {
    return Warn(kPerf, name, value, ">= 50% of peak", "slower than a healthy node: compare with its neighbours; check clocks and power");
  }
  return Pass(kPerf, name, value, ">= 50% of peak");
}

std::vector<CheckResult> CheckPerf(const platform::HostInfo& host, const std::string& self_binary, double timeout_s) {
  std::vector<CheckResult> results;
  if (host.gpus.empty()) {
    results.push_back(Skip(kPerf, "gemm", "no GPU: the performance screen is for GPU nodes (benchmark gemm measures CPUs)"));
    results.push_back(Skip(kPerf, "all-reduce", "no GPU"));
    return results;
  }
  auto gemm = RunCommand({self_binary, "--quiet", "direct", "--nproc-per-node", std::to_string(host.gpus.size()), "--",
                          "benchmark", "gemm", "--device", "gpu", "--dtype", "bf16", "-M", "8192", "--iters", "20",
                          "--output", "json"},
                         {.timeout_s = timeout_s});
  auto report = gemm.ok() && gemm->exit_code == 0 ? nlohmann::json::parse(gemm->out, nullptr, false) : nlohmann::json();
  if (!report.is_object() || !report.contains("results")) {
    results.push_back(Fail(kPerf, "gemm", gemm.ok() ? std::string(Trim(gemm->Tail(2))) : gemm.error().message, "runs",
                           "run `primus-cli direct -- benchmark gemm --device gpu` to see the error"));
  } else {
    for (const auto& rank : report["results"]) {
      results.push_back(GemmVerdict(fmt::format("gemm GPU{}", rank.value("local_rank", 0)), rank.value("tflops", 0.0),
                                    rank.value("peak_tflops", 0.0)));
    }
  }
  if (host.gpus.size() < 2) {
    results.push_back(Skip(kPerf, "all-reduce", "one GPU: no collective between local GPUs"));
    return results;
  }
  auto comm = RunCommand({self_binary, "--quiet", "direct", "--nproc-per-node", std::to_string(host.gpus.size()), "--",
                          "benchmark", "comm", "--device", "gpu", "--op", "allreduce", "-b", "64M", "-e", "64M", "-n", "10",
                          "-w", "2", "-c", "1", "--json"},
                         {.timeout_s = timeout_s});
  auto comm_report = comm.ok() && comm->exit_code == 0 ? nlohmann::json::parse(comm->out, nullptr, false) : nlohmann::json();
  if (!comm_report.is_object() || !comm_report.contains("collectives") || comm_report["collectives"].empty()) {
    results.push_back(Fail(kPerf, "all-reduce", comm.ok() ? std::string(Trim(comm->Tail(2))) : comm.error().message,
                           "runs and checks", "run `primus-cli direct -- benchmark comm --device gpu -c 1` to see the error"));
  } else {
    double busbw = comm_report["collectives"][0]["average_bus_bandwidth"].value("bandwidth", 0.0);
    results.push_back(Pass(kPerf, "all-reduce", fmt::format("{:.1f} GB/s bus bandwidth at 64 MiB, results checked", busbw),
                           "runs, results correct"));
  }
  return results;
}

}  // namespace primus::preflight
