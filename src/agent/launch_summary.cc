#include "agent/launch_summary.h"

#include <fmt/format.h>

#include "platform/sysfs_files.h"
#include "util/strings.h"

namespace primus::agent {

std::string DescribeLaunch(const LaunchSpec& spec) {
  int world_size = spec.nnodes * spec.nproc_per_node;
  int first = spec.node_rank * spec.nproc_per_node;
  std::string ranks = spec.nproc_per_node == 1 ? fmt::format("global rank {}", first)
                                               : fmt::format("global ranks {}-{}", first, first + spec.nproc_per_node - 1);
  std::string out = fmt::format("world: {} node{} x {} worker{} = world size {}; this node is node rank {} ({})\n",
                                spec.nnodes, spec.nnodes == 1 ? "" : "s", spec.nproc_per_node,
                                spec.nproc_per_node == 1 ? "" : "s", world_size, spec.node_rank, ranks);
  std::string master = spec.master_addr.empty() ? "127.0.0.1" : spec.master_addr;
  out += spec.master_port == 0 ? "master: " + master + ", free port chosen at launch\n"
                               : fmt::format("master: {}:{}\n", master, spec.master_port);
  out += "worker command (once per local rank): " + ShellJoin(spec.argv) + "\n";
  if (!spec.placements.empty()) {
    out += "cpu binding (--numa-bind):\n";
    for (size_t rank = 0; rank < spec.placements.size(); ++rank) {
      const WorkerPlacement& placement = spec.placements[rank];
      out += placement.cpus.empty()
                 ? fmt::format("  local rank {}: not bound (no NUMA CPU list known)\n", rank)
                 : fmt::format("  local rank {}: CPUs {}, OMP_NUM_THREADS={}\n", rank,
                               platform::FormatCpuList(placement.cpus), placement.omp_num_threads);
    }
  }
  return out;
}

}  // namespace primus::agent
