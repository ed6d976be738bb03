// The node's network as NCCL will see it: RDMA ports under
// /sys/class/infiniband (state, link layer, rate, and for RoCE the GID index
// of the RoCE v2 IPv4 entry), and IP interfaces under /sys/class/net
// (operstate, MAC, speed; addresses from getifaddrs on a live system).
#pragma once

#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "platform/sysfs_files.h"

namespace primus::platform {

std::vector<IbPort> DetectIbPorts(const Roots& roots, Diagnostics& diagnostics);

// Interfaces in name order. Addresses are filled only when roots are the
// live system's (Roots::IsLiveSystem).
std::vector<NetInterface> DetectInterfaces(const Roots& roots, Diagnostics& diagnostics);

// "400 Gb/sec (4X NDR)" -> 400; 0 when it cannot be read.
double ParseIbRateGbps(const std::string& rate);

// The state word of "4: ACTIVE" or "5: LinkUp".
std::string IbStateName(const std::string& text);

}  // namespace primus::platform
