#include "platform/info_report.h"

#include <fmt/format.h>

#include <bit>
#include <map>

#include "platform/network_config.h"
#include "platform/routing.h"
#include "platform/sysfs_files.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

nlohmann::ordered_json OrNull(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
}
nlohmann::ordered_json OrNull(double number) {
  return number > 0 ? nlohmann::ordered_json(number) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json GpuJson(const GpuInfo& gpu) {
  nlohmann::ordered_json out;
  out["index"] = gpu.index;
  out["vendor"] = gpu.vendor;
  out["model"] = OrNull(gpu.model);
  out["product"] = gpu.product;
  out["arch"] = OrNull(gpu.arch);
  out["device_id"] = fmt::format("0x{:04x}", gpu.device_id);
  out["memory_bytes"] = gpu.memory_bytes;
  out["memory_source"] = OrNull(gpu.memory_source);
  out["pci_bus_id"] = OrNull(gpu.pci_bus_id);
  out["numa_node"] = gpu.numa_node;
  out["uuid"] = OrNull(gpu.uuid);
  out["pcie"] = {{"current_speed", OrNull(gpu.pci.current_link_speed)},
                 {"current_width", gpu.pci.current_link_width},
                 {"max_speed", OrNull(gpu.pci.max_link_speed)},
                 {"max_width", gpu.pci.max_link_width},
                 {"driver", OrNull(gpu.pci.driver)}};
  if (gpu.vendor == "amd") {
    out["kfd_node"] = gpu.kfd_node;
    out["render_minor"] = gpu.render_minor;
    out["num_xcc"] = gpu.num_xcc;
    out["hive_id"] = gpu.hive_id ? nlohmann::ordered_json(fmt::format("0x{:x}", gpu.hive_id)) : nullptr;
    out["xgmi_peers"] = gpu.xgmi_peers;
  } else {
    out["device_minor"] = gpu.device_minor;
  }
  if (gpu.known) {
    out["peak"] = {{"bf16_tflops", OrNull(gpu.known->bf16_tflops)},
                   {"fp8_tflops", OrNull(gpu.known->fp8_tflops)},
                   {"fp32_tflops", OrNull(gpu.known->fp32_tflops)},
                   {"hbm_tb_per_s", OrNull(gpu.known->hbm_tb_per_s)}};
  } else {
    out["peak"] = nullptr;
  }
  return out;
}

nlohmann::ordered_json NicsJson(const HostInfo& host) {
  nlohmann::ordered_json rdma = nlohmann::ordered_json::array();
  std::vector<const IbPort*> usable = UsableIbPorts(host);
  for (const IbPort& port : host.ib_ports) {
    bool used = false;
    for (const IbPort* candidate : usable) used = used || candidate == &port;
    rdma.push_back({{"device", port.device},
                    {"port", port.port},
                    {"state", port.state},
                    {"phys_state", port.phys_state},
                    {"rate", port.rate},
                    {"rate_gbps", port.rate_gbps},
                    {"link_layer", port.link_layer},
                    {"roce_v2_gid_index", port.roce_v2_gid_index},
                    {"netdev", OrNull(port.netdev)},
                    {"pci_bus_id", OrNull(port.pci_bus_id)},
                    {"numa_node", port.numa_node},
                    {"used_by_nccl", used}});
  }
  nlohmann::ordered_json interfaces = nlohmann::ordered_json::array();
  for (const NetInterface& interface : host.interfaces) {
    nlohmann::ordered_json addresses = nlohmann::ordered_json::array();
    for (const Ipv4Address& address : interface.ipv4) {
      addresses.push_back(fmt::format("{}/{}", FormatIpv4(address.address), std::popcount(address.netmask)));
    }
    interfaces.push_back({{"name", interface.name},
                          {"operstate", interface.operstate},
                          {"mac", OrNull(interface.mac)},
                          {"speed_mbps", interface.speed_mbps},
                          {"mtu", interface.mtu},
                          {"loopback", interface.loopback},
                          {"virtual", interface.virtual_device},
                          {"ipv4", addresses}});
  }
  return {{"rdma_ports", rdma}, {"interfaces", interfaces}};
}

// "32.0 GT/s PCIe" -> "32.0 GT/s"
std::string ShortSpeed(const std::string& speed) { return ReplaceAll(speed, " PCIe", ""); }

// One labelled line of the text report: the label in a 10-column margin.
void Line(std::string& out, std::string_view label, const std::string& text) {
  out += fmt::format("{:<10}{}\n", label, text);
}

std::string GiB(int64_t bytes) { return fmt::format("{:.0f} GiB", static_cast<double>(bytes) / (1LL << 30)); }

}  // namespace

nlohmann::ordered_json InfoJson(const HostInfo& host, const EnvironmentPlan& plan) {
  nlohmann::ordered_json info;
  nlohmann::ordered_json numa = nlohmann::ordered_json::array();
  for (const NumaNode& node : host.numa_nodes) numa.push_back({{"id", node.id}, {"cpus", FormatCpuList(node.cpus)}});
  info["host"] = {{"hostname", host.hostname},
                  {"os", host.os},
                  {"kernel", host.kernel},
                  {"cpu_model", host.cpu_model},
                  {"sockets", host.sockets},
                  {"physical_cores", host.physical_cores},
                  {"logical_cpus", host.logical_cpus},
                  {"memory_bytes", host.memory_bytes},
                  {"numa_nodes", numa},
                  {"allowed_cpus", OrNull(FormatCpuList(host.allowed_cpus))}};
  info["drivers"] = {{"amdgpu", OrNull(host.amdgpu_driver_version)}, {"nvidia", OrNull(host.nvidia_driver_version)}};
  info["gpus"] = nlohmann::ordered_json::array();
  for (const GpuInfo& gpu : host.gpus) info["gpus"].push_back(GpuJson(gpu));
  info["nics"] = NicsJson(host);
  info["profile_chain"] = nlohmann::ordered_json::array();
  for (const ProfileLayer& layer : plan.profile_chain) {
    info["profile_chain"].push_back({{"layer", layer.layer}, {"file", OrNull(layer.file)}});
  }
  info["env"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : plan.variables) {
    info["env"][name] = {{"value", value.value}, {"origin", value.origin}};
  }
  info["notes"] = plan.notes;
  std::vector<std::string> warnings = host.warnings;
  warnings.insert(warnings.end(), plan.warnings.begin(), plan.warnings.end());
  info["warnings"] = warnings;
  info["detection_ms"] = host.detection_milliseconds;
  return info;
}

std::string PlanText(const EnvironmentPlan& plan) {
  std::string out;
  std::vector<std::string> chain;
  for (const ProfileLayer& layer : plan.profile_chain) {
    chain.push_back(layer.file.empty() ? layer.layer + " (no file)" : layer.file);
  }
  Line(out, "profiles", Join(chain, " > "));
  size_t width = 0;
  for (const auto& [name, value] : plan.variables) width = std::max(width, name.size() + value.value.size() + 1);
  for (const auto& [name, value] : plan.variables) {
    Line(out, &name == &plan.variables.begin()->first ? "env" : "",
         fmt::format("{:<{}}  {}", name + "=" + value.value, width, value.origin));
  }
  for (const std::string& note : plan.notes) Line(out, "note", note);
  return out;
}

std::string InfoText(const HostInfo& host, const EnvironmentPlan& plan) {
  std::string out;
  auto line = [&out](std::string_view label, const std::string& text) { Line(out, label, text); };
  line("host", fmt::format("{} ({}, kernel {})", host.hostname, host.os.empty() ? "unknown OS" : host.os, host.kernel));
  line("cpu", fmt::format("{}: {} socket(s), {} cores, {} threads", host.cpu_model.empty() ? "unknown" : host.cpu_model,
                          host.sockets, host.physical_cores, host.logical_cpus));
  std::vector<std::string> nodes;
  for (const NumaNode& node : host.numa_nodes) nodes.push_back(fmt::format("{}: {}", node.id, FormatCpuList(node.cpus)));
  line("memory", GiB(host.memory_bytes) + (nodes.empty() ? "" : "; NUMA " + Join(nodes, "  ")));

  if (host.gpus.empty()) {
    line("gpus", "none");
  } else {
    std::map<std::string, int> models;
    for (const GpuInfo& gpu : host.gpus) {
      ++models[fmt::format("{} ({})", gpu.product, gpu.arch.empty() ? "unknown arch" : gpu.arch)];
    }
    std::vector<std::string> summary;
    for (const auto& [name, count] : models) summary.push_back(fmt::format("{} x {}", count, name));
    line("gpus", Join(summary, ", "));
    for (const GpuInfo& gpu : host.gpus) {
      std::string link = gpu.pci.current_link_width
                             ? fmt::format("PCIe {} x{} (max {} x{})", ShortSpeed(gpu.pci.current_link_speed),
                                           gpu.pci.current_link_width, ShortSpeed(gpu.pci.max_link_speed),
                                           gpu.pci.max_link_width)
                             : "PCIe link unknown";
      std::string xgmi = gpu.xgmi_peers.empty() ? "" : fmt::format(", XGMI to {} GPU(s)", gpu.xgmi_peers.size());
      out += fmt::format("  {:>2}  {}  numa {:>2}  {}  {}{}\n", gpu.index, gpu.pci_bus_id.empty() ? "?" : gpu.pci_bus_id,
                         gpu.numa_node, gpu.memory_bytes ? GiB(gpu.memory_bytes) : "memory unknown", link, xgmi);
    }
  }
  std::vector<std::string> drivers;
  if (!host.amdgpu_driver_version.empty()) drivers.push_back("amdgpu " + host.amdgpu_driver_version);
  if (!host.nvidia_driver_version.empty()) drivers.push_back("nvidia " + host.nvidia_driver_version);
  if (!drivers.empty()) line("drivers", Join(drivers, ", "));

  if (host.ib_ports.empty()) {
    line("rdma", "none");
  } else {
    for (const IbPort& port : host.ib_ports) {
      std::string roce = port.is_roce() ? fmt::format(" RoCE v2 GID {}{}", port.roce_v2_gid_index,
                                                      port.netdev.empty() ? "" : " on " + port.netdev)
                                        : "";
      line(&port == &host.ib_ports.front() ? "rdma" : "",
           fmt::format("{}:{} {} {} {}{}", port.device, port.port, port.state.empty() ? "?" : port.state,
                       port.rate.empty() ? "rate unknown" : port.rate, port.link_layer, roce));
    }
  }
  std::vector<std::string> interfaces;
  for (const NetInterface& interface : host.interfaces) {
    if (interface.loopback) continue;
    interfaces.push_back(fmt::format("{} {}{}", interface.name, interface.operstate,
                                     interface.speed_mbps > 0 ? fmt::format(" {} Mb/s", interface.speed_mbps) : ""));
  }
  line("network", interfaces.empty() ? "no interfaces" : Join(interfaces, ", "));

  out += PlanText(plan);
  std::vector<std::string> warnings = host.warnings;
  warnings.insert(warnings.end(), plan.warnings.begin(), plan.warnings.end());
  for (const std::string& warning : warnings) line("warning", warning);
  return out;
}

}  // namespace primus::platform
