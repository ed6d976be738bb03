// One preflight run on this node: the local checks it was asked for, then,
// in a multi-node job, the exchange with node 0 (node_exchange.h); node 0
// adds the cross-node checks, prints every node's verdict and writes the
// node lists. Also the fast subset `train` runs before every launch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "preflight/check_result.h"
#include "preflight/gpu_checks.h"
#include "preflight/perf_checks.h"
#include "util/error.h"

namespace primus::preflight {

struct PreflightOptions {
  bool host = false, gpu = false, network = false, software = false, perf = false;
  bool import_torch = false;  // --software/--all: a real `import torch`
  GpuExpectations expect;
  std::string python = "python3";
  std::string workspace = ".";
  bool json = false;           // --json: the report as JSON on stdout instead of text
  std::string output_file;     // --output FILE: the report as JSON in a file; "" none
  std::string report_dir;      // --report DIR; "" not given (multi-node: the working directory)
  double timeout_s = 60;       // how long node 0 waits for the others, and the others for node 0
  PerfTests perf_tests;        // which --perf measurements (--tests, --quick, --comm-sizes-mb)
};

struct JobPlacement {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;
  int master_port = 0;
  std::vector<std::string> hosts;  // by node rank when known (SLURM_JOB_NODELIST), else empty
};

// What a run found, for a caller that acts on it (train --preflight full).
struct PreflightVerdict {
  bool own_fail = false;           // this node's checks: a FAIL
  bool job_fail = false;           // any node's (node 0 judged them all)
  std::vector<std::string> failing_hosts;  // node 0 only: the hosts that FAIL
};

// Exit status: 0 pass or warnings, 1 any failure (on node 0: on any node).
Result<int> RunPreflight(const PreflightOptions& options, const JobPlacement& placement, const platform::Roots& roots,
                         const std::map<std::string, std::string>& env, const std::string& self_binary,
                         PreflightVerdict* verdict = nullptr);

// The checks that can doom a training job before it starts, all from sysfs,
// procfs and the environment (no interpreter started, a few milliseconds):
// /dev/shm and disk, GPU count, RAS errors, the socket interfaces, node 0's port.
std::vector<CheckResult> QuickTrainChecks(const platform::HostInfo& host, const platform::Roots& roots,
                                          const std::map<std::string, std::string>& env, const JobPlacement& placement,
                                          const std::string& workspace);

}  // namespace primus::preflight
