// The GPU and RDMA devices of this host that a container needs: which vendor
// (from the platform layer's detection; else the presence of /dev/kfd or
// /dev/nvidiactl), which of the device paths exist, the groups that own
// the GPU device files, and whether podman has a CDI specification for
// NVIDIA GPUs. BuildEngineCommand turns this into engine flags.
#pragma once

#include <string>

#include "platform/host_info.h"
#include "runtime/container_command.h"

namespace primus::runtime {

// `dev` is normally "/dev"; tests point it at a directory of their own.
GpuDevices FindGpuDevices(const platform::HostInfo& host, const std::string& dev = "/dev");

}  // namespace primus::runtime
