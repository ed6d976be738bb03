// Network variables derived from what this node has, for the variables the
// user has not set (the caller decides that; see environment_plan.h):
//   NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME  the *name* of the interface that
//       routes to MASTER_ADDR (loopback only for a single-node job)
//   NCCL_IB_HCA        ACTIVE RDMA ports as dev:port,dev:port
//   NCCL_IB_GID_INDEX  the RoCE v2 GID index, when the ports are RoCE
//   NCCL_IB_DISABLE=1  when no RDMA port is usable
// NCCL matches NCCL_SOCKET_IFNAME and NCCL_IB_HCA entries as prefixes
// (mlx5_1 also selects mlx5_10); a leading '=' asks for exact names, and is
// added when a chosen name is a prefix of another name on the node.
#pragma once

#include <string>
#include <vector>

#include "platform/host_info.h"

namespace primus::platform {

struct NetworkSetting {
  std::string name;
  std::string value;
};

struct NetworkPlan {
  std::vector<NetworkSetting> settings;
  std::vector<std::string> notes;     // how each value was chosen, or why none was
  std::vector<std::string> warnings;  // things the user should fix
};

// `master_addr` may be empty (then a single-node job uses loopback and a
// multi-node job gets no socket interface). A host name is resolved forward.
NetworkPlan AutoConfigureNetwork(const HostInfo& host, const std::string& master_addr, int nnodes);

// The RDMA ports NCCL should use: ACTIVE ones; when both InfiniBand and
// RoCE ports are active, only the InfiniBand ones (the Ethernet port is then
// usually the front-end or storage network).
std::vector<const IbPort*> UsableIbPorts(const HostInfo& host);

}  // namespace primus::platform
