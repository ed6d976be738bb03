// GPU checks on one host: count and model as expected and uniform, memory
// already in use and processes already on the GPUs (nothing should run
// before the job), ECC/RAS error counters, PCIe links trained below their
// maximum, XGMI links where the GPUs are in a hive, and the driver version.
// NVLink is not visible in sysfs: reported as SKIP. Everything comes from
// platform detection (sysfs, KFD; NVML/amd-smi when present), so the checks
// run on fixture hosts.
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "platform/gpu_live_status.h"
#include "preflight/check_result.h"

namespace primus::preflight {

struct GpuExpectations {
  int count = -1;     // --expect-gpus; -1: any (at least one when GPU checks were asked for)
  std::string model;  // --expect-model ("MI300X", "H100"); "" any
};

std::vector<CheckResult> CheckGpus(const platform::HostInfo& host, const platform::Roots& roots,
                                   const std::vector<platform::GpuLiveStatus>& runtime,
                                   const GpuExpectations& expect);

// The model name preflight compares across nodes ("MI300X", or the product).
std::string GpuModel(const platform::GpuInfo& gpu);

}  // namespace primus::preflight
