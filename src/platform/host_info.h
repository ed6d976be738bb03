// What DetectHost finds on one node: GPUs, PCI accelerators, NICs, routes,
// CPUs and NUMA nodes, memory, kernel and OS. Plain data, filled from sysfs
// and procfs only (no vendor tool is run), so it is cheap to build and easy
// to construct in tests. Every task reads it; nothing in it is ever written
// back to the machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/device_table.h"

namespace primus::platform {

// One PCI function that looks like an accelerator (display or processing
// accelerator class, or a GPU vendor), from /sys/bus/pci/devices.
struct PciDevice {
  std::string bus_id;  // "0000:0c:00.0"
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint32_t class_code = 0;  // 0x120000 processing accelerator, 0x030200 3D controller
  int numa_node = -1;       // -1: unknown, or a single-node machine
  std::string driver;       // "amdgpu", "nvidia", "vfio-pci", "" when unbound
  std::string current_link_speed;  // "32.0 GT/s PCIe"
  std::string max_link_speed;
  int current_link_width = 0;
  int max_link_width = 0;
};

struct GpuInfo {
  int index = 0;               // position in HostInfo::gpus: the runtime's enumeration order
  std::string vendor;          // "amd" | "nvidia"
  std::string model;           // device-table model ("MI300X"), "" when unknown
  std::string product;         // human name: table product, or the driver's own name
  std::string arch;            // "gfx942", "sm90"; "" when unknown
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  int64_t memory_bytes = 0;    // 0 when unknown
  std::string memory_source;   // "kfd", "device table" or "" (see docs/platform.md)
  std::string pci_bus_id;      // "0000:0c:00.0"
  int numa_node = -1;
  std::string uuid;            // "GPU-..." as the visible-device variables accept it
  PciDevice pci;               // link speed and width, driver; bus_id empty if not found
  const KnownDevice* known = nullptr;  // table entry with peak numbers, if any

  // AMD (KFD topology).
  int kfd_node = -1;
  uint64_t gpu_id = 0;
  uint64_t hive_id = 0;        // XGMI hive; 0 when not in one
  int render_minor = -1;       // /dev/dri/renderD<minor>
  int num_xcc = 0;             // compute dies in this (partition of the) GPU
  std::vector<int> xgmi_peers; // indices of the GPUs this one has XGMI links to

  // NVIDIA (procfs).
  int device_minor = -1;       // /dev/nvidia<minor>
};

// One port of an RDMA device (InfiniBand or RoCE).
struct IbPort {
  std::string device;          // "mlx5_0"
  int port = 1;
  std::string state;           // "ACTIVE", "DOWN", ... ("" when unreadable)
  std::string phys_state;      // "LinkUp", "Disabled", ...
  std::string rate;            // "400 Gb/sec (4X NDR)"
  double rate_gbps = 0;
  std::string link_layer;      // "InfiniBand" | "Ethernet"
  int roce_v2_gid_index = -1;  // RoCE v2 GID for IPv4 (else the first RoCE v2), -1 none
  std::string netdev;          // the Ethernet interface behind a RoCE port, if known
  std::string pci_bus_id;
  int numa_node = -1;

  bool active() const { return state == "ACTIVE" && (phys_state.empty() || phys_state == "LinkUp"); }
  bool is_roce() const { return link_layer == "Ethernet"; }
};

struct Ipv4Address {
  uint32_t address = 0;  // network byte order, as in in_addr::s_addr
  uint32_t netmask = 0;
};

// A network interface from /sys/class/net (and its addresses on a live system).
struct NetInterface {
  std::string name;
  std::string operstate;   // "up", "down", "unknown" (loopback and some virtual links)
  std::string mac;
  int64_t speed_mbps = -1; // -1: unknown or link down
  int mtu = 0;
  bool loopback = false;
  bool virtual_device = false;  // no backing device: veth, bridge, bond, ifb
  std::vector<Ipv4Address> ipv4;
};

// One row of /proc/net/route (the main IPv4 table).
struct RouteEntry {
  std::string interface;
  uint32_t destination = 0;  // network byte order
  uint32_t gateway = 0;
  uint32_t mask = 0;
  unsigned flags = 0;
  int metric = 0;
};

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
};

struct HostInfo {
  std::string hostname;
  std::string kernel;       // "6.1.0-18-amd64"
  std::string os;           // PRETTY_NAME from os-release
  std::string cpu_model;
  int logical_cpus = 0;
  int physical_cores = 0;
  int sockets = 0;
  int64_t memory_bytes = 0;
  std::vector<NumaNode> numa_nodes;
  // CPUs this process may run on (Cpus_allowed_list of /proc/self/status:
  // a Slurm or container cpuset); empty when unknown, meaning all.
  std::vector<int> allowed_cpus;

  std::vector<GpuInfo> gpus;
  std::vector<PciDevice> accelerators;  // every accelerator-class PCI function seen
  std::string nvidia_driver_version;
  std::string amdgpu_driver_version;

  std::vector<IbPort> ib_ports;
  std::vector<NetInterface> interfaces;
  std::vector<RouteEntry> routes;

  // What could not be read or parsed; each was also logged as a warning.
  std::vector<std::string> warnings;
  double detection_milliseconds = 0;

  const NetInterface* FindInterface(const std::string& name) const;
  // The NUMA node with this id, or nullptr.
  const NumaNode* FindNumaNode(int id) const;
};

}  // namespace primus::platform
