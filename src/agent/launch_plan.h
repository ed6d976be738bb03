// A LaunchSpec checked and completed before anything starts: every default
// filled in (run id, log directory, master address and port), the worker
// executable found on PATH, the console prefix parsed. Everything that can
// make a launch impossible fails here, as an Error with the documented exit
// code, so that no worker is ever started for a launch that cannot succeed.
#pragma once

#include <string>

#include "agent/console_prefix.h"
#include "agent/launch_spec.h"
#include "util/error.h"

namespace primus::agent {

struct LaunchPlan {
  LaunchSpec spec;         // with master_addr, master_port, log_dir and run_id filled in
  std::string executable;  // argv[0] resolved on PATH
  std::string host;        // short host name: log file names, banner, console prefix
  std::string token;       // unique per launch; every worker carries it in PRIMUS_LAUNCH_TOKEN
  int cpu_count = 1;       // The run's log directory, ours alone (util/private_files.h), where no
// earlier run's logs are overwritten:
//   - `given` empty: ${TMPDIR:-/tmp}/primus-<uid>/<run id>, or
//     <run id>_<8 hex digits> when that run id was used before;
//   - `given` (--log-dir): itself, created when missing; when it holds logs
//     `host` wrote in an earlier run, a fresh <run id> (or <run id>_<8 hex
//     digits>) inside it, as torchrun makes one per run. Other hosts of the
//     job may share it.
// Returns the directory; an EnvironmentError (exit 4) when it, or the default
// one's parent, belongs to another user, is a link or is open to others.
Result<std::string> MakeRunLogDir(const std::string& given, const std::string& run_id, const std::string& host);

// CPUs this process may run on (affinity mask)
  ConsolePrefix console_prefix;

  int world_size() const { return spec.nnodes * spec.nproc_per_node; }
  int global_rank(int local_rank) const { return spec.node_rank * spec.nproc_per_node + local_rank; }
};

// Validates `spec` (bad values -> UsageError, code 2), resolves the executable
// (missing -> EnvironmentError, code 4), picks or checks the port (in use on
// node 0 -> code 4) and creates the log directory (code 4 when it cannot).
Result<LaunchPlan> PlanLaunch(const LaunchSpec& spec);

// The run's log directory, ours alone (util/private_files.h), where no
// earlier run's logs are overwritten:
//   - `given` empty: ${TMPDIR:-/tmp}/primus-<uid>/<run id>, or
//     <run id>_<8 hex digits> when that run id was used before;
//   - `given` (--log-dir): itself, created when missing; when it holds logs
//     `host` wrote in an earlier run, a fresh <run id> (or <run id>_<8 hex
//     digits>) inside it, as torchrun makes one per run. Other hosts of the
//     job may share it.
// Returns the directory; an EnvironmentError (exit 4) when it, or the default
// one's parent, belongs to another user, is a link or is open to others.
Result<std::string> MakeRunLogDir(const std::string& given, const std::string& run_id, const std::string& host);

// CPUs this process may run on (its affinity mask), at least 1.
int UsableCpuCount();

// "<yyyymmdd-hhmmss>-<6 hex digits>" in local time.
std::string GenerateRunId();
// 32 random hex digits.
std::string GenerateToken();

}  // namespace primus::agent
