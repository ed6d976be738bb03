#include "platform/placement.h"

#include <algorithm>

#include "platform/visible_devices.h"

namespace primus::platform {
namespace {

// The NUMA node local rank `rank` belongs to, or -1.
int NumaNodeOfRank(const HostInfo& host, const std::vector<int>& visible, int rank) {
  if (!visible.empty()) {
    int node = host.gpus[static_cast<size_t>(visible[static_cast<size_t>(rank) % visible.size()])].numa_node;
    // A one-node machine reports -1 for every device.
    if (node < 0 && host.numa_nodes.size() == 1) node = host.numa_nodes.front().id;
    return node;
  }
  if (host.numa_nodes.empty()) return -1;
  return host.numa_nodes[static_cast<size_t>(rank) % host.numa_nodes.size()].id;
}

std::vector<int> AllowedCpusOfNode(const HostInfo& host, int node_id) {
  const NumaNode* node = host.FindNumaNode(node_id);
  if (!node) return {};
  if (host.allowed_cpus.empty()) return node->cpus;
  std::vector<int> cpus;
  std::set_intersection(node->cpus.begin(), node->cpus.end(), host.allowed_cpus.begin(),
                        host.allowed_cpus.end(), std::back_inserter(cpus));
  return cpus;
}

}  // namespace

RankPlacement PlaceLocalRank(const HostInfo& host, const Environment& environment, int local_rank,
                             int local_world_size) {
  RankPlacement placement;
  local_world_size = std::max(1, local_world_size);
  std::vector<int> visible = VisibleGpuIndices(host, environment);
  if (!visible.empty()) placement.gpu_index = visible[static_cast<size_t>(local_rank) % visible.size()];

  int node = NumaNodeOfRank(host, visible, local_rank);
  std::vector<int> cpus = node >= 0 ? AllowedCpusOfNode(host, node) : std::vector<int>{};
  if (!cpus.empty()) {
    placement.numa_node = node;
    placement.cpus = std::move(cpus);
    int sharing = 0;
    for (int rank = 0; rank < local_world_size; ++rank) sharing += NumaNodeOfRank(host, visible, rank) == node;
    placement.omp_num_threads = std::max(1, static_cast<int>(placement.cpus.size()) / std::max(1, sharing));
  } else {
    int available = host.allowed_cpus.empty() ? host.logical_cpus : static_cast<int>(host.allowed_cpus.size());
    placement.omp_num_threads = std::max(1, available / local_world_size);
  }
  return placement;
}

std::vector<int> CpusForLocalRank(const HostInfo& host, const Environment& environment, int local_rank,
                                  int local_world_size) {
  return PlaceLocalRank(host, environment, local_rank, local_world_size).cpus;
}

}  // namespace primus::platform
