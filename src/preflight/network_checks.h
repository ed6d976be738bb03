// Network checks on one host: the interfaces NCCL_SOCKET_IFNAME and
// GLOO_SOCKET_IFNAME name exist and are up (NCCL's syntax: a comma list of
// prefixes, `=` for an exact name, `^` to exclude), InfiniBand ports ACTIVE
// and LinkUp (only the HCAs NCCL_IB_HCA names, when set), a RoCE v2 GID on
// every active RoCE port, MASTER_ADDR resolves (forward only: an address the
// user gave is never reverse-resolved), and node 0's rendezvous port is free.
// Reachability and bandwidth between nodes are measured by the node
// exchange (node_exchange.h), not here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "platform/host_info.h"
#include "preflight/check_result.h"

namespace primus::preflight {

struct NetworkSettings {
  std::map<std::string, std::string> env;  // NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, NCCL_IB_HCA as set
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;  // "" when not given (single node)
  int master_port = 0;      // 0 when not given
};

std::vector<CheckResult> CheckNetwork(const platform::HostInfo& host, const NetworkSettings& settings);

// The interfaces of `host` an NCCL-style IFNAME value selects.
std::vector<std::string> SelectInterfaces(const platform::HostInfo& host, const std::string& ifname);

}  // namespace primus::preflight
