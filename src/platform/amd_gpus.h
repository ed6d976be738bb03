// AMD GPUs from the KFD topology the amdgpu driver publishes under
// /sys/class/kfd/kfd/topology/nodes: the same source ROCm itself enumerates,
// so the order and the set match what HIP and ROCR will see (nodes a device
// cgroup hides from a container are unreadable there, and are skipped).
// No rocm-smi text is parsed; the model comes from the PCI device id, and a
// device missing from the table still gets its gfx architecture.
#pragma once

#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "platform/sysfs_files.h"

namespace primus::platform {

// GPUs in KFD node order, indexes not yet assigned. `pci` is the accelerator
// scan, used for NUMA node and link details.
std::vector<GpuInfo> DetectAmdGpus(const Roots& roots, const std::vector<PciDevice>& pci,
                                   Diagnostics& diagnostics);

}  // namespace primus::platform
