#include "platform/pci_devices.h"

#include <fmt/format.h>

#include <algorithm>

#include "platform/device_table.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

bool IsAccelerator(uint16_t vendor_id, uint32_t class_code) {
  uint32_t base_class = class_code >> 16;
  if (base_class == 0x12) return true;  // processing accelerator (MI300-class, Gaudi, ...)
  bool gpu_vendor = vendor_id == kAmdVendorId || vendor_id == kNvidiaVendorId;
  return gpu_vendor && base_class == 0x03;  // VGA, 3D or other display controller
}

// Identity and link attributes of the function at `dir`; vendor and class
// are read by the caller (the scan needs them first to decide).
PciDevice ReadPciDetails(const std::string& dir, const std::string& bus_id, uint16_t vendor_id,
                         uint32_t class_code) {
  PciDevice device;
  device.bus_id = NormalizeBusId(bus_id);
  device.vendor_id = vendor_id;
  device.class_code = class_code;
  device.device_id = static_cast<uint16_t>(ParseUnsigned(ReadAttribute(dir + "/device").value_or(""), 16).value_or(0));
  device.numa_node = static_cast<int>(ReadIntegerAttribute(dir + "/numa_node", -1));
  device.driver = LinkTargetName(dir + "/driver");
  device.current_link_speed = ReadAttribute(dir + "/current_link_speed").value_or("");
  device.max_link_speed = ReadAttribute(dir + "/max_link_speed").value_or("");
  device.current_link_width = static_cast<int>(ReadIntegerAttribute(dir + "/current_link_width", 0));
  device.max_link_width = static_cast<int>(ReadIntegerAttribute(dir + "/max_link_width", 0));
  return device;
}

}  // namespace

std::string BusIdFromLocation(uint64_t domain, uint64_t location_id) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, (location_id >> 8) & 0xff,
                     (location_id >> 3) & 0x1f, location_id & 7);
}

std::string NormalizeBusId(const std::string& bus_id) {
  std::string id = ToLower(Trim(bus_id));
  size_t colon = id.find(':');
  // A domain printed with 8 digits (NVML, nvidia-smi) is cut to the usual 4.
  if (colon != std::string::npos && colon > 4 && id.find(':', colon + 1) != std::string::npos) {
    id = id.substr(colon - 4);
  }
  return id;
}

PciDevice ReadPciDevice(const Roots& roots, const std::string& bus_id) {
  std::string dir = roots.Sys("bus/pci/devices/" + bus_id);
  auto vendor = ReadAttribute(dir + "/vendor");
  if (!vendor) return PciDevice{};
  auto class_code = ParseUnsigned(ReadAttribute(dir + "/class").value_or(""), 16);
  return ReadPciDetails(dir, bus_id, static_cast<uint16_t>(ParseUnsigned(*vendor, 16).value_or(0)),
                        static_cast<uint32_t>(class_code.value_or(0)));
}

PciDevice FindOrReadPciDevice(const Roots& roots, const std::vector<PciDevice>& scanned, const std::string& bus_id) {
  for (const PciDevice& device : scanned) {
    if (device.bus_id == bus_id) return device;
  }
  return ReadPciDevice(roots, bus_id);
}

std::vector<PciDevice> ScanPciAccelerators(const Roots& roots, Diagnostics& diagnostics) {
  std::vector<PciDevice> accelerators;
  std::string devices_dir = roots.Sys("bus/pci/devices");
  // Bus ids are fixed-width hex: byte order is bus order (natural order is not).
  std::vector<std::string> bus_ids = ListDirectory(devices_dir);
  std::sort(bus_ids.begin(), bus_ids.end());
  for (const std::string& bus_id : bus_ids) {
    std::string dir = devices_dir + "/" + bus_id;
    auto vendor = ReadAttribute(dir + "/vendor");
    auto class_text = ReadAttribute(dir + "/class");
    if (!vendor || !class_text) {
      diagnostics.Warn("cannot read the vendor or class of PCI device " + dir + "; skipping it");
      continue;
    }
    auto vendor_id = ParseUnsigned(*vendor, 16);
    auto class_code = ParseUnsigned(*class_text, 16);
    if (!vendor_id || !class_code) {
      diagnostics.Warn("malformed vendor '" + *vendor + "' or class '" + *class_text + "' in " + dir);
      continue;
    }
    if (!IsAccelerator(static_cast<uint16_t>(*vendor_id), static_cast<uint32_t>(*class_code))) continue;
    accelerators.push_back(ReadPciDetails(dir, bus_id, static_cast<uint16_t>(*vendor_id),
                                          static_cast<uint32_t>(*class_code)));
  }
  return accelerators;
}

}  // namespace primus::platform
