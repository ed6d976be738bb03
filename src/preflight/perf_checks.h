// --perf: short real measurements through our own benchmark tasks (run as
// subprocesses of this binary, so a crashing vendor library cannot take
// preflight down): a bf16 8192^3 GEMM on each local GPU against the device
// table's peak, and collectives across the local GPUs (all-reduce, and
// all-to-all when asked) at each size, results checked. A node below the
// thresholds is slow, not broken: WARN under 50% of peak GEMM, FAIL under
// 25% (hardware.md's healthy MI300X screen, 600 of 1307 TFLOPS, is 46%).
// CPU-only hosts: SKIP, with the reason.
//
// Which tests, as Primus's preflight names them: --tests gemm,
// intra-allreduce, intra-alltoall or all; --comm-sizes-mb 64,1024 (default
// 64); --quick: gemm and intra-allreduce at 64 and 1024 MiB with fewer
// iterations. Primus's inter-node tokens are refused with what measures
// that here (benchmark comm across the nodes).
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"
#include "preflight/check_result.h"
#include "util/error.h"

namespace primus::preflight {

struct PerfTests {
  bool gemm = true, all_reduce = true, all_to_all = false;
  std::vector<int> sizes_mb = {64};
  bool quick = false;  // fewer iterations
};

// --tests' value; a usage error names an unknown token or an inter-node one.
Result<PerfTests> ParsePerfTests(const std::string& list, PerfTests base);
// --comm-sizes-mb' value: whole MiB, comma-separated.
Result<std::vector<int>> ParseSizesMb(const std::string& list, const std::string& flag);
// The quick preset (before --tests/--comm-sizes-mb given besides).
PerfTests QuickPerfTests();
// "gemm (20 iterations), all-reduce at 64, 1024 MiB": for --dry-run.
std::string DescribePerfTests(const PerfTests& tests);

// A SIGINT, SIGTERM or SIGHUP during a benchmark run ends that run (its
// whole process group) and the tests: the stopped test is a FAIL naming the
// signal, and the signal is returned in `stop_signal` for the caller to end with.
std::vector<CheckResult> CheckPerf(const platform::HostInfo& host, const std::string& self_binary, double timeout_s,
                                   const PerfTests& tests = {}, int* stop_signal = nullptr);

// The GEMM verdict for one measurement (separate so that it is testable
// without a GPU).
CheckResult GemmVerdict(const std::string& name, double tflops, double peak_tflops);

}  // namespace primus::preflight
