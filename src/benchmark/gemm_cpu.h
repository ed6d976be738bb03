// GEMM on the CPU through OpenBLAS (Debian's libopenblas0-pthread), opened
// at run time. It computes fp32 (cblas_sgemm) whatever dtype was asked and
// says so in the result; OpenBLAS threads follow OPENBLAS_NUM_THREADS or
// OMP_NUM_THREADS (the agent sets the latter per worker). The buffer sets
// rotate through at least twice the last-level cache. No CPU peak is
// derived: percent of peak stays empty.
#pragma once

#include <memory>
#include <string>

#include "benchmark/gemm_engine.h"

namespace primus::benchmark {

// Bytes of the largest CPU cache in sysfs (under `sysfs_cpu`, normally
// /sys/devices/system/cpu), or a 32 MiB guess when none is readable.
int64_t LastLevelCacheBytes(const std::string& sysfs_cpu = "/sys/devices/system/cpu");

// Opens OpenBLAS; `cpu_model` names the device in results.
Result<std::unique_ptr<GemmEngine>> OpenCpuGemmEngine(const std::string& cpu_model);

}  // namespace primus::benchmark
