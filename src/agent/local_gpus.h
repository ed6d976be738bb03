// How many workers "auto" means: one per GPU this process may use, else one.
// The GPUs are the ones named by CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES /
// ROCR_VISIBLE_DEVICES when set, else the devices the drivers expose
// (/proc/driver/nvidia/gpus/*, KFD topology nodes with a non-zero gpu_id).
// The platform layer will own richer detection; this is only the count.
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"

namespace primus::agent {

// GPU devices under `root` ("" = the real /): NVIDIA procfs entries, else
// KFD GPU nodes.
int CountGpuDevices(const std::string& root = "");

// Visible GPUs: the *_VISIBLE_DEVICES list when set, else CountGpuDevices().
int CountVisibleGpus();

// nproc_per_node as written: a number >= 1, "auto" or "gpu" (visible GPUs,
// at least 1), "cpu" (CPUs this process may use). UsageError otherwise.
Result<int> ResolveNprocPerNode(std::string_view text);

}  // namespace primus::agent
