// A LaunchSpec checked and completed before anything starts: every default
// filled in (run id, log directory, master address and port), the worker
// executable found on PATH, the console prefix parsed. Everything that can
// make a launch impossible fails here, as an Error with the documented exit
// code, so that no worker is ever started for a launch that cannot succeed.
#pragma once

#include <string>
#include <vector>

#include "agent/console_prefix.h"
#include "agent/launch_spec.h"
#include "util/error.h"

namespace primus::agent {

struct LaunchPlan {
  LaunchSpec spec;         // with master_addr, master_port, log_dir and run_id filled in
  std::string executable;  // argv[0] resolved on PATH
  std::string host;        // short host name: log file names, banner, console prefix
  std::string token;       // unique per launch; every worker carries it in PRIMUS_LAUNCH_TOKEN
  int cpu_count = 1;       // CPUs this process may run on (affinity mask)
  ConsolePrefix console_prefix;
  // Every node's address, by node rank, as node 0 sees it (its own: the
  // master address); what TF_CONFIG's cluster lists. One entry on one node.
  std::vector<std::string> node_hosts;

  int world_size() const { return spec.nnodes * spec.nproc_per_node; }
  int global_rank(int local_rank) const { return spec.node_rank * spec.nproc_per_node + local_rank; }
};

// Validates `spec` (bad values -> UsageError, code 2), resolves the executable
// (missing -> UnavailableError, code 4), picks or checks the port (in use on
// node 0 -> code 4) and creates the log directory (code 4 when it cannot).
Result<LaunchPlan> PlanLaunch(const LaunchSpec& spec);

// The run's log directory, ours alone (util/private_files.h), where no
// earlier run's logs are overwritten. Its attempts start at
// `first_generation` (a requeued job's restart count), so an earlier run's
// logs clash only when they hold attempt_<k>, k >= first_generation, with a
// file of `host`'s:
//   - `given` empty: ${TMPDIR:-/tmp}/primus-<uid>/<run id>, or
//     <run id>_<8 hex digits> when that run id was used before;
//   - `given` (--log-dir) ours: itself, created when missing; on a clash,
//     `given`/<run id>, which the job's other nodes (the same run id) join,
//     or <run id>_<8 hex digits> when that one clashes too (torchrun makes a
//     directory per run the same way);
//   - `given` another user's but sticky (a shared scratch directory, as
//     /tmp): `given`/<run id> (or <run id>_<8 hex digits>), ours alone.
// Returns the directory; an UnavailableError (exit 4) when `given`, or the
// default root, belongs to another user (and is not sticky), is a link or is
// open to others.
Result<std::string> MakeRunLogDir(const std::string& given, const std::string& run_id, const std::string& host,
                                  int first_generation);

// CPUs this process may run on (its affinity mask), at least 1.
int UsableCpuCount();

// "<yyyymmdd-hhmmss>-<6 hex digits>" in local time.
std::string GenerateRunId();

}  // namespace primus::agent
