// NVIDIA GPUs from the driver's procfs (/proc/driver/nvidia/gpus/<bdf>/
// information: Model, GPU UUID, Bus Location, Device Minor) joined with the
// PCI view (device id, NUMA node, link). Inside a container the NVIDIA
// runtime shows only the GPUs given to it there, so procfs is the list that
// counts; without procfs, PCI functions bound to the nvidia driver are used.
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "platform/sysfs_files.h"

namespace primus::platform {

// GPUs in bus order, indexes not yet assigned.
std::vector<GpuInfo> DetectNvidiaGpus(const Roots& roots, const std::vector<PciDevice>& pci,
                                      Diagnostics& diagnostics);

// "550.54.15" from the NVRM line of /proc/driver/nvidia/version; "" if absent.
std::string NvidiaDriverVersion(const Roots& roots);

}  // namespace primus::platform
