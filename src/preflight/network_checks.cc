#include "preflight/network_checks.h"

#include <netdb.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>

#include "io/tcp_port.h"
#include "util/strings.h"

namespace primus::preflight {
namespace {

const std::string kNet = "network";

bool Up(const platform::NetInterface& interface) {
  return interface.operstate == "up" || (interface.loopback && interface.operstate != "down");
}

std::string Names(const platform::HostInfo& host) {
  std::vector<std::string> names;
  for (const auto& interface : host.interfaces) names.push_back(interface.name + (Up(interface) ? "" : " (down)"));
  return names.empty() ? "none" : Join(names, ", ");
}

}  // namespace

std::vector<std::string> SelectInterfaces(const platform::HostInfo& host, const std::string& ifname) {
  std::string value = ifname;
  bool exclude = !value.empty() && value.front() == '^';
  if (exclude) value.erase(0, 1);
  bool exact = !value.empty() && value.front() == '=';
  if (exact) value.erase(0, 1);
  std::vector<std::string> patterns;
  for (const std::string& part : Split(value, ',')) {
    if (!Trim(part).empty()) patterns.emplace_back(Trim(part));
  }
  std::vector<std::string> selected;
  for (const auto& interface : host.interfaces) {
    bool matches = std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
      return exact ? interface.name == pattern : interface.name.starts_with(pattern);
    });
    if (matches != exclude) selected.push_back(interface.name);
  }
  return selected;
}

std::vector<CheckResult> CheckNetwork(const platform::HostInfo& host, const NetworkSettings& settings) {
  std::vector<CheckResult> results;
  for (const char* variable : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}) {
    auto found = settings.env.find(variable);
    if (found == settings.env.end() || found->second.empty()) {
      results.push_back(Pass(kNet, variable, "not set (the library picks an interface)", "unset, or names an interface that is up"));
      continue;
    }
    std::string shown = std::string(variable) + "=" + found->second;
    std::vector<std::string> selected = SelectInterfaces(host, found->second);
    std::vector<std::string> up;
    for (const std::string& name : selected) {
      const platform::NetInterface* interface = host.FindInterface(name);
      if (interface != nullptr && Up(*interface) && (found->second.front() != '^' || !interface->loopback)) up.push_back(name);
    }
    // NCCL is not used without GPUs: there a wrong NCCL_SOCKET_IFNAME only warns.
    bool matters = std::string(variable) != "NCCL_SOCKET_IFNAME" || !host.gpus.empty();
    auto bad = matters ? Fail : Warn;
    if (selected.empty()) {
      results.push_back(bad(kNet, variable, shown + " selects no interface", "an existing interface",
                            "this node has: " + Names(host) + "; set " + variable + " to one of them on every node"));
    } else if (up.empty()) {
      results.push_back(bad(kNet, variable, shown + ": " + Join(selected, ", ") + " down", "an interface that is up",
                            "bring the interface up (ip link set <if> up) or name another one"));
    } else {
      results.push_back(Pass(kNet, variable, shown + " -> " + Join(up, ", "), "an interface that is up"));
    }
  }
  // RDMA ports: the HCAs NCCL_IB_HCA names (its own syntax: prefixes, ^, =, :port), else all.
  std::vector<std::string> hcas;
  auto hca = settings.env.find("NCCL_IB_HCA");
  bool hca_exclude = false;
  if (hca != settings.env.end() && !hca->second.empty()) {
    std::string value = hca->second;
    hca_exclude = value.front() == '^';
    if (hca_exclude) value.erase(0, 1);
    if (!value.empty() && value.front() == '=') value.erase(0, 1);
    for (const std::string& part : Split(value, ',')) hcas.push_back(Split(part, ':').front());
  }
  int active = 0, checked = 0;
  for (const platform::IbPort& port : host.ib_ports) {
    if (!hcas.empty()) {
      bool named = std::any_of(hcas.begin(), hcas.end(), [&](const std::string& h) { return port.device.starts_with(h); });
      if (named == hca_exclude) continue;
    }
    ++checked;
    std::string name = fmt::format("rdma {}:{}", port.device, port.port);
    std::string value = fmt::format("{} {} ({})", port.state, port.phys_state, port.link_layer);
    if (!port.active()) {
      bool unused_roce = port.is_roce() && port.phys_state == "Disabled" && hcas.empty();
      if (unused_roce) {
        results.push_back(Warn(kNet, name, value, "ACTIVE LinkUp",
                               "a disabled RoCE port: fine if unused, else enable it; NCCL_IB_HCA can leave it out"));
      } else {
        results.push_back(Fail(kNet, name, value, "ACTIVE LinkUp",
                               "the port is down: check the cable and switch (ibstat " + port.device +
                                   "); exclude the node or leave the HCA out of NCCL_IB_HCA"));
      }
      continue;
    }
    ++active;
    if (port.is_roce() && port.roce_v2_gid_index < 0) {
      results.push_back(Fail(kNet, name + " gid", "no RoCE v2 GID", "a RoCE v2 GID (IPv4)",
                             "give " + (port.netdev.empty() ? std::string("the port's interface") : port.netdev) +
                                 " an IPv4 address, or set NCCL_IB_GID_INDEX"));
    }
  }
  if (host.ib_ports.empty()) results.push_back(Skip(kNet, "rdma", "no InfiniBand/RoCE device (TCP sockets only)"));
  else if (checked > 0) results.push_back(Pass(kNet, "rdma", fmt::format("{} of {} ports ACTIVE", active, checked), "ACTIVE LinkUp"));

  if (!settings.master_addr.empty()) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int error = ::getaddrinfo(settings.master_addr.c_str(), nullptr, &hints, &found);
    if (error != 0) {
      results.push_back(Fail(kNet, "MASTER_ADDR", settings.master_addr + ": " + ::gai_strerror(error), "resolves",
                             "fix the name (DNS, /etc/hosts) or give node 0's IP address with --master-addr"));
    } else {
      ::freeaddrinfo(found);
      results.push_back(Pass(kNet, "MASTER_ADDR", settings.master_addr + " resolves", "resolves"));
    }
  }
  if (settings.node_rank == 0 && settings.master_port > 0) {
    if (Status free = io::CheckPortFree(settings.master_port); !free) {
      results.push_back(Fail(kNet, "MASTER_PORT", fmt::format("{} is in use", settings.master_port), "free on node 0",
                             "a stale job holds it (ss -ltnp | grep " + std::to_string(settings.master_port) +
                                 "): end it or choose another --master-port"));
    } else {
      results.push_back(Pass(kNet, "MASTER_PORT", fmt::format("{} free", settings.master_port), "free on node 0"));
    }
  }
  return results;
}

}  // namespace primus::preflight
