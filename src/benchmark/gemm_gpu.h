// GEMM on one GPU through cuBLASLt (NVIDIA) or hipBLASLt (AMD), both opened
// at run time with their runtime (gpu_api.h). The algorithm is the
// library's first heuristic choice; --tune times the top candidates (up to
// 16) and keeps the fastest. Timing uses device events around every
// iteration (in batches beyond 1000 iterations) after warm-up, cycling
// through enough (A, B, D) buffer sets that one cycle touches at least
// 512 MiB: twice the largest last-level cache of the GPUs in the device
// table (256 MB Infinity Cache on MI300X/MI325X/MI355X; H100 has 50 MB of L2).
#pragma once

#include <memory>

#include "benchmark/gemm_engine.h"
#include "benchmark/gpu_api.h"
#include "platform/host_info.h"

namespace primus::benchmark {

inline constexpr int64_t kGpuCacheBytes = int64_t{256} << 20;
inline constexpr size_t kBlasLtWorkspaceBytes = size_t{64} << 20;
inline constexpr int kTuneCandidates = 16;

// Opens the runtime and the BLASLt library of `vendor`, selects `device`
// (an index among the visible GPUs: the worker's LOCAL_RANK) and matches it
// by PCI bus id with `host`'s detected GPUs for its model, architecture and
// peak numbers.
Result<std::unique_ptr<GemmEngine>> OpenGpuGemmEngine(GpuVendor vendor, int device, const platform::HostInfo& host);

// The device-table entry for a runtime's device name ("NVIDIA H100 80GB
// HBM3", "NVIDIA H100 PCIe", "AMD Instinct MI300X"), for hosts where the GPU
// is not found by PCI address (containers without sysfs): the longest model
// name the device name contains, with the PCIe / NVL variant when named.
// nullptr when nothing matches.
const platform::KnownDevice* KnownDeviceFromName(const std::string& name);

// The device table's peak for `dtype` (bf16/fp16, fp8, fp32; tf32 has no
// column): 0 when unknown.
double PeakTflops(const platform::KnownDevice* known, GemmDtype dtype);

}  // namespace primus::benchmark
