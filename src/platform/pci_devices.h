// Accelerators as the PCI bus sees them, whatever driver (if any) is bound:
// /sys/bus/pci/devices/<bdf>/{vendor,device,class,numa_node,*_link_*}. This
// is the view that still works when the GPU driver is not loaded, and the
// one that gives NUMA placement and PCIe link health for every vendor.
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "platform/sysfs_files.h"

namespace primus::platform {

// Display controllers and processing accelerators of AMD and NVIDIA, and
// processing accelerators (class 0x12) of any vendor, in bus order.
std::vector<PciDevice> ScanPciAccelerators(const Roots& roots, Diagnostics& diagnostics);

// One PCI function by address; bus_id is empty when it does not exist.
PciDevice ReadPciDevice(const Roots& roots, const std::string& bus_id);

// The device from an earlier scan, or read afresh when the scan skipped it
// (a GPU whose PCI class the scan does not treat as an accelerator).
PciDevice FindOrReadPciDevice(const Roots& roots, const std::vector<PciDevice>& scanned, const std::string& bus_id);

// "0000:0c:00.0" from KFD's domain and location_id (bus<<8 | device<<3 | function).
std::string BusIdFromLocation(uint64_t domain, uint64_t location_id);

// Lower-case, four-digit-domain form of a bus id ("00000000:18:00.0" and
// "0000:18:00.0" both become "0000:18:00.0"), so ids from different sources compare.
std::string NormalizeBusId(const std::string& bus_id);

}  // namespace primus::platform
