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
// intra-allreduce, intra-alltoall, inter-allreduce, inter-alltoall,
// inter-p2p, inter-ring-p2p or all; --comm-sizes-mb 64,1024 (default 64),
// with --intra-/--inter-comm-sizes-mb and --ring-p2p-sizes-mb overriding it;
// --quick: gemm, intra-allreduce and inter-allreduce at 64 and 1024 MiB with
// fewer iterations. The inter-node tests run our comm benchmark across every
// node of the job (a `direct --nnodes N` launch of it from each node's
// preflight, on master port + 10 and + 11): NCCL/RCCL over the GPUs, gloo
// with one worker per node on CPU hosts; node 0 reports the bandwidth. The
// point-to-point tests are a ring of sends between the same GPU of
// neighbouring nodes (sendrecv with --stride GPUs per node).
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"
#include "preflight/check_result.h"
#include "util/error.h"

namespace primus::preflight {

struct PerfTests {
  bool gemm = true, all_reduce = true, all_to_all = false;
  bool inter_all_reduce = false, inter_all_to_all = false, inter_p2p = false, inter_ring_p2p = false;
  std::vector<int> sizes_mb = {64};
  std::vector<int> intra_sizes_mb, inter_sizes_mb;  // empty: sizes_mb
  std::vector<int> ring_sizes_mb = {10, 20, 40, 80, 160};
  double cleanup_delay_s = 2.0;  // between two inter-node runs: the last one's ports close everywhere
  bool quick = false;            // fewer iterations
  bool any_inter() const { return inter_all_reduce || inter_all_to_all || inter_p2p || inter_ring_p2p; }
};

// Where the job's nodes meet for the inter-node tests.
struct PerfPlacement {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;
  int master_port = 0;  // the inter-node runs use master_port + 10 (and + 11, their control channel)
  double join_timeout_s = 60;
};

// --tests' value; a usage error names an unknown token.
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
                                   const PerfTests& tests = {}, int* stop_signal = nullptr,
                                   const PerfPlacement& placement = {});

// The GEMM verdict for one measurement (separate so that it is testable
// without a GPU).
CheckResult GemmVerdict(const std::string& name, double tflops, double peak_tflops);

}  // namespace primus::preflight
