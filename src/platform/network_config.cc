#include "platform/network_config.h"

#include <netinet/in.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "platform/routing.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

// True when `name` is a proper prefix of a name in `others` that is not chosen.
bool PrefixOfAnother(const std::string& name, const std::vector<std::string>& chosen,
                     const std::vector<std::string>& others) {
  for (const std::string& other : others) {
    if (other.size() > name.size() && other.rfind(name, 0) == 0 &&
        std::find(chosen.begin(), chosen.end(), other) == chosen.end()) {
      return true;
    }
  }
  return false;
}

void ChooseSocketInterface(const HostInfo& host, const std::string& master_addr, int nnodes, NetworkPlan& plan) {
  const std::string unset = "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME are left unset";
  uint32_t target = htonl(INADDR_LOOPBACK);
  if (master_addr.empty()) {
    if (nnodes > 1) {
      plan.warnings.push_back(fmt::format("MASTER_ADDR is not set in a {}-node job: {}", nnodes, unset));
      return;
    }
  } else {
    auto address = ResolveIpv4(master_addr);
    if (!address.ok()) {
      plan.warnings.push_back(address.error().message + ": " + unset);
      return;
    }
    target = *address;
  }
  RouteChoice choice = InterfaceForAddress(host, target);
  std::string master = master_addr.empty()                ? "(single node, no MASTER_ADDR)"
                       : master_addr == FormatIpv4(target) ? master_addr
                                                           : fmt::format("{} ({})", master_addr, FormatIpv4(target));
  if (choice.interface.empty()) {
    plan.warnings.push_back(fmt::format("no route to MASTER_ADDR {}: {}", master, unset));
    return;
  }
  if (choice.reason == "loopback" && nnodes > 1) {
    plan.warnings.push_back(fmt::format("MASTER_ADDR {} is a loopback address in a {}-node job, which other "
                                        "nodes cannot reach: {}", master, nnodes, unset));
    return;
  }
  const std::string& interface = choice.interface;
  if (const NetInterface* found = host.FindInterface(interface); found && found->operstate == "down") {
    plan.warnings.push_back("interface " + interface + " towards MASTER_ADDR is down");
  }
  std::vector<std::string> names;
  for (const NetInterface& candidate : host.interfaces) names.push_back(candidate.name);
  bool exact = PrefixOfAnother(interface, {interface}, names);
  plan.settings.push_back({"NCCL_SOCKET_IFNAME", (exact ? "=" : "") + interface});
  plan.settings.push_back({"GLOO_SOCKET_IFNAME", interface});
  plan.notes.push_back(fmt::format("socket interface {} reaches MASTER_ADDR {} ({})", interface, master, choice.reason));
}

void ChooseIbPorts(const HostInfo& host, NetworkPlan& plan) {
  std::vector<const IbPort*> ports = UsableIbPorts(host);
  if (ports.empty()) {
    plan.settings.push_back({"NCCL_IB_DISABLE", "1"});
    plan.notes.push_back(host.ib_ports.empty() ? "no RDMA device: NCCL uses sockets"
                                               : "no ACTIVE RDMA port: NCCL uses sockets");
    return;
  }
  std::vector<std::string> chosen_devices, all_devices;
  for (const IbPort* port : ports) chosen_devices.push_back(port->device);
  for (const IbPort& port : host.ib_ports) all_devices.push_back(port.device);
  bool exact = false;
  std::vector<std::string> entries;
  for (const IbPort* port : ports) {
    exact = exact || PrefixOfAnother(port->device, chosen_devices, all_devices);
    entries.push_back(port->device + ":" + std::to_string(port->port));
  }
  plan.settings.push_back({"NCCL_IB_HCA", (exact ? "=" : "") + Join(entries, ",")});
  plan.notes.push_back(fmt::format("{} of {} RDMA port(s) are ACTIVE and used", ports.size(), host.ib_ports.size()));

  // The GID index most RoCE ports agree on.
  std::map<int, int> votes;
  int roce_ports = 0;
  for (const IbPort* port : ports) {
    if (!port->is_roce()) continue;
    ++roce_ports;
    if (port->roce_v2_gid_index >= 0) ++votes[port->roce_v2_gid_index];
  }
  if (roce_ports == 0) return;
  if (votes.empty()) {
    plan.warnings.push_back("the RoCE ports have no RoCE v2 GID: NCCL_IB_GID_INDEX is not derived");
    return;
  }
  auto best = std::max_element(votes.begin(), votes.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  if (votes.size() > 1) {
    plan.warnings.push_back(fmt::format("RoCE ports disagree on the RoCE v2 GID index; using {} ({} of {} ports)",
                                        best->first, best->second, roce_ports));
  }
  plan.settings.push_back({"NCCL_IB_GID_INDEX", std::to_string(best->first)});
}

}  // namespace

std::vector<const IbPort*> UsableIbPorts(const HostInfo& host) {
  std::vector<const IbPort*> active;
  bool any_infiniband = false;
  for (const IbPort& port : host.ib_ports) {
    if (!port.active()) continue;
    active.push_back(&port);
    any_infiniband = any_infiniband || !port.is_roce();
  }
  if (any_infiniband) {
    active.erase(std::remove_if(active.begin(), active.end(), [](const IbPort* port) { return port->is_roce(); }),
                 active.end());
  }
  return active;
}

NetworkPlan AutoConfigureNetwork(const HostInfo& host, const std::string& master_addr, int nnodes) {
  NetworkPlan plan;
  ChooseSocketInterface(host, master_addr, nnodes, plan);
  ChooseIbPorts(host, plan);
  return plan;
}

}  // namespace primus::platform
