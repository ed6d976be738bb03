// --perf: short real measurements through our own benchmark tasks (run as
// subprocesses of this binary, so a crashing vendor library cannot take
// preflight down): a bf16 8192^3 GEMM on each local GPU against the device
// table's peak, and an all-reduce across the local GPUs. A node below the
// thresholds is slow, not broken: WARN under 50% of peak GEMM, FAIL under
// 25% (hardware.md's healthy MI300X screen, 600 of 1307 TFLOPS, is 46%).
// CPU-only hosts: SKIP, with the reason.
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"
#include "preflight/check_result.h"

namespace primus::preflight {

std::vector<CheckResult> CheckPerf(const platform::HostInfo& host, const std::string& self_binary, double timeout_s);

// The GEMM verdict for one measurement (separate so that it is testable
// without a GPU).
CheckResult GemmVerdict(const std::string& name, double tflops, double peak_tflops);

}  // namespace primus::preflight
