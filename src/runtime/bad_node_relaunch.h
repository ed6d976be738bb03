// direct.exclude_bad_nodes, the launcher's side (docs/agent.md, "Bad nodes"):
// node 0 finds a node bad (the hang's culprit, a failure again on the same
// node), that node's agent exits with ExitCode::kNodeExcluded (5), and the
// job ends; `slurm srun` and `ssh` then start it again without that host,
// on a spare node, while spares and restarts remain. The agents learn how
// many spares there are from `--set direct.spare_nodes=N`
// (SpareNodesOption): without one, node 0 keeps the node and restarts in
// place, as without the policy. A batch job whose allocation has no spare
// left goes on as a new job without the bad hosts (`continue_elsewhere`:
// slurm_submit.h), and counts as one spare for its agents.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

// The global options that tell the agents how many spares there are.
std::vector<std::string> SpareNodesOption(int spare);

struct StepEnd {
  int exit_code = 0;
  std::vector<std::string> excluded_hosts;  // the hosts whose agent exited 5
};

struct RelaunchPlan {
  int nodes = 1;                   // the job's node count
  // The hosts the job may run on (an allocation's nodes, a hostfile's
  // hosts); empty: the scheduler finds new ones (srun outside an allocation).
  std::vector<std::string> pool;
  int max_relaunches = 0;          // direct.max_restarts: every restart counts, the scheduler's before too
  int restarts_before = 0;         // restarts a scheduler made before (carried on as PRIMUS_SCHEDULER_RESTARTS)
  // When the pool has too few hosts left and a restart remains: the job goes
  // on elsewhere without `excluded`, as restart `restart`; the exit code to
  // end with. Unset: the job ends with the last run's exit code.
  std::function<Result<int>(const std::vector<std::string>& excluded, int restart)> continue_elsewhere;
};

// One run of the job without `excluded`; `spare`: the nodes left to take a
// bad one's place (PRIMUS_SPARE_NODES for its agents); `relaunch`: 0 first.
using RunStep = std::function<Result<StepEnd>(const std::vector<std::string>& excluded, int spare, int relaunch)>;

// Runs the job, and again without each host found bad while the pool has
// spares and restarts remain; the last run's exit code.
Result<int> RunExcludingBadNodes(const RelaunchPlan& plan, const RunStep& run);

// The hosts of `pool` not in `excluded`, in order.
std::vector<std::string> HostsLeft(const std::vector<std::string>& pool, const std::vector<std::string>& excluded);

}  // namespace primus::runtime
