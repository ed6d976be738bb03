// The host around the accelerators: CPU model and counts (/proc/cpuinfo),
// NUMA nodes and their CPUs (/sys/devices/system/node/node*/cpulist), memory
// (/proc/meminfo), kernel and host name (/proc/sys/kernel), and the OS
// (os-release). Placement (--numa-bind) and preflight build on these.
#pragma once

#include "platform/host_info.h"
#include "platform/roots.h"
#include "platform/sysfs_files.h"

namespace primus::platform {

// Fills the CPU, NUMA, memory, kernel, host name and OS fields of `host`.
void DetectHostSystem(const Roots& roots, Diagnostics& diagnostics, HostInfo& host);

}  // namespace primus::platform
