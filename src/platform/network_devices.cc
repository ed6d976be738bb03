#include "platform/network_devices.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <fmt/format.h>

#include "util/files.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

// A RoCE GID that embeds an IPv4 address: ::ffff:a.b.c.d.
bool IsIpv4MappedGid(const std::string& gid) {
  return gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
}

bool IsZeroGid(const std::string& gid) {
  for (char c : gid) {
    if (c != '0' && c != ':') return false;
  }
  return true;
}

// The index of the RoCE v2 GID NCCL should use: the first whose address is
// IPv4-mapped (NCCL's default address family), else the first RoCE v2 GID
// with an address, else -1. Entries whose type cannot be read are empty slots.
int RoceV2GidIndex(const std::string& port_dir) {
  std::string types_dir = port_dir + "/gid_attrs/types";
  int first_v2 = -1;
  for (const std::string& entry : ListDirectory(types_dir)) {
    auto type = ReadAttribute(types_dir + "/" + entry);
    if (!type || ToLower(*type) != "roce v2") continue;
    auto index = ParseUnsigned(entry);
    if (!index) continue;
    auto gid = ReadAttribute(port_dir + "/gids/" + entry);
    if (gid && IsZeroGid(*gid)) continue;
    if (gid && IsIpv4MappedGid(*gid)) return static_cast<int>(*index);
    if (first_v2 < 0) first_v2 = static_cast<int>(*index);
  }
  return first_v2;
}

// The Ethernet interface a RoCE port carries, from its GID attributes or the
// device's net/ directory.
std::string RoceNetdev(const std::string& device_dir, const std::string& port_dir, int gid_index) {
  if (gid_index >= 0) {
    if (auto netdev = ReadAttribute(port_dir + "/gid_attrs/ndevs/" + std::to_string(gid_index))) return *netdev;
  }
  std::vector<std::string> netdevs = ListDirectory(device_dir + "/device/net");
  return netdevs.empty() ? "" : netdevs.front();
}

void FillAddresses(std::vector<NetInterface>& interfaces) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return;
  for (ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET) continue;
    for (NetInterface& interface : interfaces) {
      if (interface.name != entry->ifa_name) continue;
      Ipv4Address address;
      address.address = reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr.s_addr;
      if (entry->ifa_netmask) address.netmask = reinterpret_cast<sockaddr_in*>(entry->ifa_netmask)->sin_addr.s_addr;
      interface.ipv4.push_back(address);
    }
  }
  ::freeifaddrs(list);
}

}  // namespace

double ParseIbRateGbps(const std::string& rate) {
  std::vector<std::string> words = Split(rate, ' ');
  return words.empty() ? 0 : ParseDouble(words[0]).value_or(0);
}

std::string IbStateName(const std::string& text) {
  size_t colon = text.find(':');
  return std::string(Trim(colon == std::string::npos ? text : text.substr(colon + 1)));
}

std::vector<IbPort> DetectIbPorts(const Roots& roots, Diagnostics& diagnostics) {
  std::vector<IbPort> ports;
  std::string class_dir = roots.Sys("class/infiniband");
  for (const std::string& device : ListDirectory(class_dir)) {
    std::string device_dir = class_dir + "/" + device;
    std::string bus_id = LinkTargetName(device_dir + "/device");
    int numa_node = static_cast<int>(ReadIntegerAttribute(device_dir + "/device/numa_node", -1));
    std::vector<std::string> port_numbers = ListDirectory(device_dir + "/ports");
    if (port_numbers.empty()) diagnostics.Warn("RDMA device " + device_dir + " lists no ports");
    for (const std::string& number : port_numbers) {
      std::string port_dir = device_dir + "/ports/" + number;
      IbPort port;
      port.device = device;
      port.port = static_cast<int>(ParseUnsigned(number).value_or(1));
      port.pci_bus_id = bus_id.find(':') != std::string::npos ? bus_id : "";
      port.numa_node = numa_node;
      auto state = ReadAttribute(port_dir + "/state");
      if (!state) diagnostics.Warn("cannot read " + port_dir + "/state; the port is treated as not active");
      port.state = IbStateName(state.value_or(""));
      port.phys_state = IbStateName(ReadAttribute(port_dir + "/phys_state").value_or(""));
      port.rate = ReadAttribute(port_dir + "/rate").value_or("");
      port.rate_gbps = ParseIbRateGbps(port.rate);
      port.link_layer = ReadAttribute(port_dir + "/link_layer").value_or("");
      if (port.link_layer.empty()) {
        diagnostics.Warn("cannot read " + port_dir + "/link_layer; assuming InfiniBand");
        port.link_layer = "InfiniBand";
      }
      if (port.is_roce()) {
        port.roce_v2_gid_index = RoceV2GidIndex(port_dir);
        port.netdev = RoceNetdev(device_dir, port_dir, port.roce_v2_gid_index);
      }
      ports.push_back(std::move(port));
    }
  }
  return ports;
}

std::vector<NetInterface> DetectInterfaces(const Roots& roots, Diagnostics& diagnostics) {
  std::vector<NetInterface> interfaces;
  std::string class_dir = roots.Sys("class/net");
  for (const std::string& name : ListDirectory(class_dir)) {
    std::string dir = class_dir + "/" + name;
    if (!IsDirectory(dir)) continue;  // bonding_masters is a file in the same directory
    NetInterface interface;
    interface.name = name;
    interface.operstate = ReadAttribute(dir + "/operstate").value_or("");
    interface.mac = ReadAttribute(dir + "/address").value_or("");
    interface.mtu = static_cast<int>(ReadIntegerAttribute(dir + "/mtu", 0));
    // Reading speed fails (EINVAL) while the link is down; that is not an error.
    interface.speed_mbps = ReadIntegerAttribute(dir + "/speed", -1);
    interface.loopback = ReadAttribute(dir + "/type").value_or("") == "772";  // ARPHRD_LOOPBACK
    interface.virtual_device = !PathExists(dir + "/device");
    if (interface.operstate.empty()) diagnostics.Warn("cannot read " + dir + "/operstate");
    interfaces.push_back(std::move(interface));
  }
  if (roots.IsLiveSystem()) FillAddresses(interfaces);
  return interfaces;
}

}  // namespace primus::platform
