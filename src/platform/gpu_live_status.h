// Optional live GPU data that sysfs alone does not give: memory in use,
// utilisation, ECC counts and the processes on each GPU. NVIDIA's NVML
// (libnvidia-ml.so.1) and AMD's amd-smi (libamd_smi.so) are opened with
// dlopen when present, so the binary never links against them; their
// absence is normal (containers, CPU hosts) and only means fewer fields.
// On AMD the KFD sysfs also gives memory in use and per-process VRAM
// without any library. DetectHost never calls this: it is for preflight and
// `info --live`-style callers that accept a few milliseconds more.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"

namespace primus::platform {

struct GpuProcess {
  int pid = 0;
  int64_t used_memory_bytes = -1;
};

// -1 wherever no source answered.
struct GpuLiveStatus {
  std::string pci_bus_id;
  std::vector<std::string> sources;  // "kfd", "nvml", "amd-smi"
  int64_t memory_used_bytes = -1;
  int64_t memory_total_bytes = -1;
  int utilization_percent = -1;
  int64_t ecc_corrected = -1;
  int64_t ecc_uncorrected = -1;
  std::vector<GpuProcess> processes;
};

struct VendorLibraries {
  std::string nvml = "libnvidia-ml.so.1";
  std::string amd_smi = "libamd_smi.so";
};

// One entry per GPU of `host`, in the same order.
std::vector<GpuLiveStatus> QueryLiveStatus(const HostInfo& host, const Roots& roots,
                                                 const VendorLibraries& libraries = {});

}  // namespace primus::platform
