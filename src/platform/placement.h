// Where each local rank should run for --numa-bind: the GPU a local rank
// drives (the local_rank-th visible GPU), that GPU's NUMA node and CPU list
// (limited to the CPUs this process may use), and the OMP_NUM_THREADS that
// shares those CPUs fairly among the ranks bound to the same node. Without
// GPUs, ranks are spread round-robin over the NUMA nodes.
#pragma once

#include <vector>

#include "util/environment.h"
#include "platform/host_info.h"

namespace primus::platform {

struct RankPlacement {
  int gpu_index = -1;      // index into HostInfo::gpus; -1 without GPUs
  int numa_node = -1;      // -1: the NUMA node is unknown; do not bind
  std::vector<int> cpus;   // empty: do not bind
  int omp_num_threads = 1;
};

RankPlacement PlaceLocalRank(const HostInfo& host, const Environment& environment, int local_rank,
                             int local_world_size);

// The CPU list of PlaceLocalRank (empty: no binding).
std::vector<int> CpusForLocalRank(const HostInfo& host, const Environment& environment, int local_rank,
                                  int local_world_size);

}  // namespace primus::platform
