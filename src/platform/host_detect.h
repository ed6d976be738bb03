// DetectHost: one call that reads everything the platform layer knows about
// this node (GPUs, PCI accelerators, NICs, routes, CPUs, NUMA, memory, OS)
// from sysfs and procfs. It runs no vendor tool and loads no vendor library,
// never fails, and takes a few milliseconds; what it could not read is in
// HostInfo::warnings.
#pragma once

#include "platform/host_info.h"
#include "platform/roots.h"

namespace primus::platform {

HostInfo DetectHost(const Roots& roots);

}  // namespace primus::platform
