// Test support: a real Slurm 22.05 cluster on this machine
// (docs: /work/shared/reference/test-infra.md). slurmctld runs here; each
// slurmd runs in a network namespace of its own, joined to the others by a
// private bridge, with its own /etc/hosts naming every node and its own host
// name, so that node names resolve inside the job, the master address taken
// from the node list really works, and banners name different hosts.
//
// Everything carries this process's id (namespaces psl<pid>n<i>, bridge
// psb<pid>, veths psv<pid>n<i>), the subnet is a free 10.x.y.0/24 and the
// controller port a free one, so test binaries can run side by side. The
// destructor stops what it started, by PID: it cancels this cluster's jobs,
// stops the daemons, kills whatever is left inside its own namespaces, and
// removes namespaces, bridge and directory. The daemons also get SIGKILL if
// the test process dies first (PR_SET_PDEATHSIG).
//
// Needs root and ip, nsenter, unshare, slurmctld, slurmd (scripts/setup.sh).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "run_process.h"

namespace primus::testing {

struct SlurmClusterOptions {
  int nodes = 2;
  int cpus_per_node = 2;
};

class SlurmCluster {
 public:
  // Why no cluster can be started on this machine; "" when one can.
  static std::string Unavailable();
  // Starts the cluster and waits until every node is idle. nullptr with
  // *error set (the logs' tails included) when it fails; whatever was started
  // by then is stopped again.
  static std::unique_ptr<SlurmCluster> Start(const SlurmClusterOptions& options, std::string* error);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // For Slurm commands and the jobs they start: SLURM_CONF, and
  // GLOO_SOCKET_IFNAME=eth0 (gloo would otherwise resolve the node's name
  // to 127.0.0.1 inside the namespaces).
  std::map<std::string, std::optional<std::string>> Environment() const;
  const std::string& dir() const { return dir_; }
  std::vector<std::string> NodeNames() const;
  // Runs a Slurm client command (squeue, scontrol, scancel ...) against this cluster.
  ProcessResult Client(const std::vector<std::string>& argv) const;
  // The pids of every process inside the nodes' namespaces.
  std::vector<pid_t> ProcessesInNodes() const;
  // The last lines of the daemons' logs, for failure messages.
  std::string LogTails() const;

 private:
  SlurmCluster() = default;
  std::string Setup(const SlurmClusterOptions& options);  // "" or what failed
  void Stop();

  std::string dir_;
  std::string conf_;
  std::string prefix_;  // x.y of 10.x.y.0/24
  std::string bridge_;
  std::vector<std::string> namespaces_;
  std::vector<std::string> nodes_;
  pid_t controller_ = -1;
  std::vector<pid_t> daemons_;  // slurmd (nsenter ... exec slurmd), one per node
  bool bridge_created_ = false;
};

}  // namespace primus::testing
