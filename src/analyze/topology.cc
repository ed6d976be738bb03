#include "analyze/topology.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>

#include "util/files.h"
#include "util/strings.h"

namespace primus::analyze {
namespace {

// The device's place in the PCI tree: the components of its real sysfs path
// from the root complex ("pci0000:00") down to itself; empty when the path is
// not a link into /sys/devices (fixture trees, some VMs).
std::vector<std::string> PciPath(const platform::Roots& roots, const std::string& bus_id) {
  if (bus_id.empty()) return {};
  std::string link = roots.Sys("bus/pci/devices/" + bus_id);
  char resolved[PATH_MAX];
  if (::realpath(link.c_str(), resolved) == nullptr) return {};
  std::vector<std::string> parts = Split(resolved, '/');
  // "pci0000:00": a PCI root complex under /sys/devices.
  auto root = std::find_if(parts.begin(), parts.end(), [](const std::string& part) {
    return part.size() == 10 && part.starts_with("pci") && part[7] == ':';
  });
  if (root == parts.end()) return {};
  return std::vector<std::string>(root, parts.end());
}

// The PCI address behind a network interface (sys/class/net/<if>/device).
std::string InterfaceBusId(const platform::Roots& roots, const std::string& name) {
  char resolved[PATH_MAX];
  if (::realpath(roots.Sys("class/net/" + name + "/device").c_str(), resolved) == nullptr) return "";
  std::string id = resolved;
  id = id.substr(id.rfind('/') + 1);
  return id.size() == 12 && id[4] == ':' && id[7] == ':' ? id : "";
}

std::string PciLink(const TopologyDevice& a, const TopologyDevice& b) {
  if (!a.pci_path.empty() && !b.pci_path.empty() && a.pci_path.front() == b.pci_path.front()) {
    // Bridges above each device (its path without the root and itself).
    std::vector<std::string> above_a(a.pci_path.begin() + 1, a.pci_path.end() - 1);
    std::vector<std::string> above_b(b.pci_path.begin() + 1, b.pci_path.end() - 1);
    size_t shared = 0;
    while (shared < above_a.size() && shared < above_b.size() && above_a[shared] == above_b[shared]) ++shared;
    if (shared == 0) return "PHB";
    size_t bridges = (above_a.size() - shared) + (above_b.size() - shared) + 1;
    return bridges <= 1 ? "PIX" : "PXB";
  }
  if (a.numa_node == b.numa_node) return "NODE";
  return "SYS";
}

std::string CpuRanges(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return text.empty() ? "-" : text;
}

}  // namespace

Topology BuildTopology(const platform::HostInfo& host, const platform::Roots& roots) {
  Topology topology;
  topology.hostname = host.hostname;
  topology.numa_nodes = host.numa_nodes;
  for (const platform::GpuInfo& gpu : host.gpus) {
    TopologyDevice device;
    device.name = "GPU" + std::to_string(gpu.index);
    device.kind = "gpu";
    device.detail = (gpu.product.empty() ? gpu.vendor : gpu.product) + " " + gpu.pci_bus_id;
    device.pci_bus_id = gpu.pci_bus_id;
    device.numa_node = gpu.numa_node;
    device.pci_path = PciPath(roots, gpu.pci_bus_id);
    for (int peer : gpu.xgmi_peers) device.xgmi_peers.push_back(static_cast<size_t>(peer));
    topology.devices.push_back(std::move(device));
  }
  std::vector<std::string> rdma_netdevs;
  for (const platform::IbPort& port : host.ib_ports) {
    auto same = std::find_if(topology.devices.begin(), topology.devices.end(),
                             [&](const TopologyDevice& d) { return d.name == port.device; });
    if (same != topology.devices.end()) continue;  // one row per device, not per port
    TopologyDevice device;
    device.name = port.device;
    device.kind = "nic";
    device.detail = fmt::format("{} {} {}{}", port.is_roce() ? "RoCE" : "InfiniBand", port.rate, port.state,
                                port.netdev.empty() ? "" : " (" + port.netdev + ")");
    device.pci_bus_id = port.pci_bus_id;
    device.numa_node = port.numa_node;
    device.pci_path = PciPath(roots, port.pci_bus_id);
    if (!port.netdev.empty()) rdma_netdevs.push_back(port.netdev);
    topology.devices.push_back(std::move(device));
  }
  for (const platform::NetInterface& interface : host.interfaces) {
    if (interface.loopback || interface.virtual_device) continue;
    if (std::find(rdma_netdevs.begin(), rdma_netdevs.end(), interface.name) != rdma_netdevs.end()) continue;
    std::string bus_id = InterfaceBusId(roots, interface.name);
    if (bus_id.empty()) continue;
    TopologyDevice device;
    device.name = interface.name;
    device.kind = "nic";
    device.detail = fmt::format("Ethernet {} {}", interface.speed_mbps > 0 ? fmt::format("{} Mb/s", interface.speed_mbps)
                                                                            : std::string("speed unknown"),
                                interface.operstate);
    device.pci_bus_id = bus_id;
    auto numa = ReadFile(roots.Sys("bus/pci/devices/" + bus_id + "/numa_node"));
    device.numa_node = numa.ok() ? static_cast<int>(ParseInt(Trim(*numa)).value_or(-1)) : -1;
    device.pci_path = PciPath(roots, bus_id);
    topology.devices.push_back(std::move(device));
  }
  size_t count = topology.devices.size();
  topology.links.assign(count, std::vector<std::string>(count));
  for (size_t i = 0; i < count; ++i) {
    for (size_t j = 0; j < count; ++j) {
      const TopologyDevice& a = topology.devices[i];
      const TopologyDevice& b = topology.devices[j];
      if (i == j) topology.links[i][j] = "X";
      else if (std::find(a.xgmi_peers.begin(), a.xgmi_peers.end(), j) != a.xgmi_peers.end()) topology.links[i][j] = "XGMI";
      else topology.links[i][j] = PciLink(a, b);
    }
  }
  return topology;
}

std::string FormatTopologyMatrix(const Topology& topology) {
  std::string out = fmt::format("topology of {}\n\n", topology.hostname.empty() ? "this host" : topology.hostname);
  if (topology.devices.empty()) {
    return out + "no GPU and no RDMA or PCI network device detected\n";
  }
  size_t width = 6;
  for (const TopologyDevice& device : topology.devices) width = std::max(width, device.name.size() + 1);
  out += fmt::format("{:<{}}", "", width);
  for (const TopologyDevice& device : topology.devices) out += fmt::format("{:<{}}", device.name, width);
  out += "NUMA  CPU affinity\n";
  for (size_t i = 0; i < topology.devices.size(); ++i) {
    const TopologyDevice& device = topology.devices[i];
    out += fmt::format("{:<{}}", device.name, width);
    for (const std::string& link : topology.links[i]) out += fmt::format("{:<{}}", link, width);
    std::string cpus = "-";
    for (const platform::NumaNode& node : topology.numa_nodes) {
      if (node.id == device.numa_node) cpus = CpuRanges(node.cpus);
    }
    out += fmt::format("{:<6}{}\n", device.numa_node >= 0 ? std::to_string(device.numa_node) : "-", cpus);
  }
  out += "\n";
  for (const TopologyDevice& device : topology.devices) out += fmt::format("  {:<{}}{}\n", device.name, width, device.detail);
  bool hierarchy = std::any_of(topology.devices.begin(), topology.devices.end(),
                               [](const TopologyDevice& d) { return !d.pci_path.empty(); });
  out += "\nLegend:\n"
         "  X    = self\n"
         "  XGMI = AMD Infinity Fabric link between the GPUs\n"
         "  PIX  = at most one PCIe switch between them\n"
         "  PXB  = several PCIe switches, no host bridge\n"
         "  PHB  = through a PCIe host bridge (same root complex)\n"
         "  NODE = between PCIe root complexes of one NUMA node\n"
         "  SYS  = across NUMA nodes\n";
  if (!hierarchy) out += "  (the PCI hierarchy is not visible here: PCIe links are shown as NODE or SYS only)\n";
  if (std::any_of(topology.devices.begin(), topology.devices.end(),
                  [](const TopologyDevice& d) { return d.detail.find("NVIDIA") != std::string::npos ||
                                                       d.detail.find("H100") != std::string::npos ||
                                                       d.detail.find("H200") != std::string::npos; })) {
    out += "  NVLink is not visible in sysfs: use `nvidia-smi topo -m` for NV# links\n";
  }
  return out;
}

std::string TopologyDot(const Topology& topology) {
  auto quote = [](const std::string& text) { return "\"" + ReplaceAll(text, "\"", "\\\"") + "\""; };
  std::string dot = "graph topology {\n  graph [fontname=\"sans-serif\", label=" +
                    quote("topology of " + topology.hostname) + ", labelloc=t];\n"
                    "  node [fontname=\"sans-serif\", shape=box, style=filled];\n";
  std::vector<int> numa_ids;
  for (const TopologyDevice& device : topology.devices) {
    if (std::find(numa_ids.begin(), numa_ids.end(), device.numa_node) == numa_ids.end()) numa_ids.push_back(device.numa_node);
  }
  std::sort(numa_ids.begin(), numa_ids.end());
  for (int id : numa_ids) {
    std::string cpus = "-";
    for (const platform::NumaNode& node : topology.numa_nodes) {
      if (node.id == id) cpus = CpuRanges(node.cpus);
    }
    dot += fmt::format("  subgraph cluster_numa{} {{\n    label={};\n", id < 0 ? 99 : id,
                       quote(id < 0 ? std::string("NUMA unknown") : fmt::format("NUMA {} (CPUs {})", id, cpus)));
    for (const TopologyDevice& device : topology.devices) {
      if (device.numa_node != id) continue;
      dot += fmt::format("    {} [label={}, fillcolor={}];\n", quote(device.name), quote(device.name + "\n" + device.detail),
                         device.kind == "gpu" ? "\"#cfe2ff\"" : "\"#d1e7dd\"");
    }
    dot += "  }\n";
  }
  for (size_t i = 0; i < topology.devices.size(); ++i) {
    for (size_t j = i + 1; j < topology.devices.size(); ++j) {
      const std::string& link = topology.links[i][j];
      if (link == "XGMI") {
        dot += fmt::format("  {} -- {} [color=\"#d62728\", penwidth=2, label=\"XGMI\"];\n", quote(topology.devices[i].name),
                           quote(topology.devices[j].name));
      } else if (link == "PIX" || link == "PXB") {
        dot += fmt::format("  {} -- {} [color=\"#1f77b4\", label={}];\n", quote(topology.devices[i].name),
                           quote(topology.devices[j].name), quote(link));
      }
    }
  }
  return dot + "}\n";
}

std::string TopologyJson(const Topology& topology) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  nlohmann::ordered_json links = nlohmann::ordered_json::object();
  for (size_t i = 0; i < topology.devices.size(); ++i) {
    const TopologyDevice& device = topology.devices[i];
    devices.push_back({{"name", device.name},
                       {"kind", device.kind},
                       {"detail", device.detail},
                       {"pci_bus_id", device.pci_bus_id},
                       {"numa_node", device.numa_node}});
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (size_t j = 0; j < topology.devices.size() && i < topology.links.size() && j < topology.links[i].size(); ++j) {
      if (i != j) row[topology.devices[j].name] = topology.links[i][j];
    }
    links[device.name] = row;
  }
  nlohmann::ordered_json json = {{"hostname", topology.hostname}, {"devices", devices}, {"links", links}};
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace primus::analyze
