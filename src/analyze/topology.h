// `analyze topology`: how the GPUs and NICs of this host connect, from what
// detection reads (sysfs; fixture trees through PRIMUS_SYSFS_ROOT): a matrix
// in the notation of `nvidia-smi topo -m` / `rocm-smi --showtopo` and a
// Graphviz picture. Links, best first:
//   XGMI  AMD Infinity Fabric between the two GPUs (KFD io_links)
//   PIX   at most one PCIe switch between them
//   PXB   several PCIe switches, no host bridge
//   PHB   through one PCIe host bridge (same root complex)
//   NODE  between root complexes of one NUMA node
//   SYS   across NUMA nodes (the CPU interconnect)
// PIX/PXB/PHB need the PCI hierarchy (the /sys/bus/pci/devices links); where
// it is not visible (VMs, fixtures) the matrix falls back to NODE/SYS.
// NVLink is not visible in sysfs: NVIDIA GPUs show their PCIe relation only.
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"

namespace primus::analyze {

struct TopologyDevice {
  std::string name;    // "GPU0", "mlx5_0", "eth0"
  std::string kind;    // "gpu" | "nic"
  std::string detail;  // "MI300X 0000:0c:00.0", "mlx5_0 400 Gb/sec (4X NDR) ACTIVE"
  std::string pci_bus_id;
  int numa_node = -1;
  std::vector<std::string> pci_path;  // "pci0000:00", then each bridge, then the device itself
  std::vector<size_t> xgmi_peers;     // indices into Topology::devices
};

struct Topology {
  std::string hostname;
  std::vector<TopologyDevice> devices;  // GPUs first, then NICs
  std::vector<platform::NumaNode> numa_nodes;
  std::vector<std::vector<std::string>> links;  // links[i][j]: "X", "XGMI", "PIX", ...
};

Topology BuildTopology(const platform::HostInfo& host, const platform::Roots& roots);

// The matrix with a CPU/NUMA affinity column and a legend.
std::string FormatTopologyMatrix(const Topology& topology);
// A Graphviz graph: NUMA nodes as clusters, XGMI and close PCIe links as edges.
std::string TopologyDot(const Topology& topology);
// The matrix as JSON: {"hostname", "devices": [{name, kind, detail,
// pci_bus_id, numa_node}], "links": {"GPU0": {"GPU1": "XGMI", ...}, ...}}.
std::string TopologyJson(const Topology& topology);

}  // namespace primus::analyze
