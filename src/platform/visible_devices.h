// Which GPUs a job launched from this environment will actually see, honouring
// the user's CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES
// (indices or UUIDs) the way the runtimes do. The launcher only reads these
// variables: it never sets or rewrites them (the public Primus overwrote
// HIP_VISIBLE_DEVICES; we do not). `--nproc-per-node auto` is the count.
#pragma once

#include <string>
#include <vector>

#include "util/environment.h"
#include "platform/host_info.h"

namespace primus::platform {


// Indices into host.gpus that the runtime will enumerate, in its order (the
// first is the job's device 0). GPUs of the host's first vendor only.
// AMD: ROCR_VISIBLE_DEVICES selects from all GPUs, then HIP_VISIBLE_DEVICES
// (or CUDA_VISIBLE_DEVICES) indexes into that selection. NVIDIA:
// CUDA_VISIBLE_DEVICES. As in CUDA, a list is read up to its first entry
// that names no GPU (with a warning); an empty value hides every GPU.
std::vector<int> VisibleGpuIndices(const HostInfo& host, const Environment& environment);

// The variables of `environment` that VisibleGpuIndices applies, in its
// order (AMD: ROCR_, then HIP_ or else CUDA_; NVIDIA: CUDA_): what hid GPUs,
// for a message that names only what had an effect.
std::vector<std::string> AppliedVisibilityVariables(const HostInfo& host, const Environment& environment);

int CountVisibleGpus(const HostInfo& host, const Environment& environment);

// The GPU a worker of `local_rank` uses (its device `local_rank` among the
// visible ones), as a person finds it on the host: "GPU 3 (0000:0c:00.0)";
// "" without GPUs or past the visible ones.
std::string GpuOfLocalRank(const HostInfo& host, const Environment& environment, int local_rank);

// What --nproc-per-node auto means: the visible GPU count, or 1 without GPUs.
int AutoProcessesPerNode(const HostInfo& host, const Environment& environment);

}  // namespace primus::platform
