#include "agent/launch_summary.h"

#include <fmt/format.h>

#include "platform/sysfs_files.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

std::string MetricsLine(const LaunchSpec& spec) {
  if (spec.metrics_port == 0) return "";
  return fmt::format("metrics: port {} serves /metrics (Prometheus) and /job.json{}\n", spec.metrics_port,
                     spec.nnodes > 1 ? " (node 0: the job's view; other nodes: their own)" : "");
}

}  // namespace

std::string DescribeLaunch(const LaunchSpec& spec) {
  if (spec.rendezvous != kStaticRendezvous && spec.nnodes > 1) {
    // Ranks and the master come from the rendezvous when the job starts.
    int minimum = spec.min_nnodes > 0 ? spec.min_nnodes : spec.nnodes;
    std::string nodes = minimum == spec.nnodes ? std::to_string(spec.nnodes)
                                               : fmt::format("{} to {} (elastic)", minimum, spec.nnodes);
    std::string out = fmt::format("world: {} nodes x {} worker{}; node ranks are handed out as nodes join\n", nodes,
                                  spec.nproc_per_node, spec.nproc_per_node == 1 ? "" : "s");
    out += spec.rendezvous == kC10dRendezvous
               ? fmt::format("rendezvous: c10d; the agent on {} that binds port {} first coordinates\n",
                             spec.master_addr, spec.control_port)
               : fmt::format("rendezvous: etcd-v2 at {}; the first agent to claim run id {} coordinates\n",
                             spec.rdzv_endpoint, spec.run_id);
    if (minimum < spec.nnodes) {
      out += fmt::format("starts once {} nodes joined and the last call ({:g} s) passed; a lost node restarts the "
                         "survivors while at least {} remain\n",
                         minimum, spec.last_call_timeout_s, minimum);
    }
    out += "master: the coordinator's host, a free port chosen for each generation\n";
    out += "worker command (once per local rank): " + ShellJoin(spec.argv) + "\n";
    if (!spec.run_id.empty()) out += "run id: " + spec.run_id + "\n";
    out += MetricsLine(spec);
    return out;
  }
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
  out += MetricsLine(spec);
  if (spec.role != "default") out += "role: " + spec.role + "\n";
  if (!spec.run_id.empty()) out += "run id: " + spec.run_id + "\n";
  if (!spec.ranks_filter.empty()) out += "console shows global ranks: " + JoinNumbers(spec.ranks_filter, ",") + "\n";
  if (!spec.local_ranks_filter.empty()) {
    out += "console shows local ranks: " + JoinNumbers(spec.local_ranks_filter, ",") + " (on every node)\n";
  }
  if (!spec.redirects.empty()) {
    out += "kept off the console (redirects; 1 stdout, 2 stderr, 3 both): " + FormatStreamSelection(spec.redirects) +
           (spec.tee.empty() ? "" : "; shown anyway (tee): " + FormatStreamSelection(spec.tee)) +
           "; the log files keep everything\n";
  }
  if (spec.stderr_to_stderr) out += "workers' stderr lines: on the agent's stderr\n";
  if (spec.omp_threads == LaunchSpec::OmpThreads::kTorchrun) {
    out += spec.nproc_per_node > 1 ? "OMP_NUM_THREADS: 1 where unset (torchrun's rule)\n"
                                   : "OMP_NUM_THREADS: left unset for a single worker (torchrun's rule)\n";
  }
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
