// Which environment variables reach the container, and how. Every one is
// passed by name (`--env NAME`) with its value in the engine client's own
// environment, never as NAME=VALUE on the engine's command line: argv is
// visible to every user in `ps`, and the job token must never be there.
//
// What is forwarded, first wins for the order:
//   1. container.env / --env entries: K=V sets K (over the host's value),
//      K forwards the host's K;
//   2. PRIMUS_JOB_TOKEN and PRIMUS_JOB_ID, whatever the prefixes;
//   3. values the launcher supplies (the scheduler's job id as
//      PRIMUS_JOB_ID, XDG_CONFIG_HOME for the mounted user configuration),
//      only where neither the user nor the host environment set them;
//   4. host variables whose names start with one of container.forward_env
//      (default PRIMUS_ NCCL_ RCCL_ GLOO_ HSA_ HIP_ CUDA_ TORCH_), sorted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

// The job's secret and id: forwarded even when the prefixes leave them out.
const std::vector<std::string>& AlwaysForwardedVariables();

struct EnvRequest {
  std::vector<std::string> entries;             // container.env: "K=V" or "K", in order
  std::string entries_origin = "--env";         // for errors: the flag or configuration origin
  std::vector<std::string> prefixes;            // container.forward_env
  std::map<std::string, std::string> host;      // this process's environment
  std::map<std::string, std::string> launcher;  // see 3. above
};

struct EnvForwarding {
  std::vector<std::string> names;             // each becomes `--env NAME`, in this order
  std::map<std::string, std::string> values;  // set in the engine client's environment
  std::vector<std::string> warnings;
};

// A usage error for an entry whose name is not a variable name.
Result<EnvForwarding> PlanEnvironment(const EnvRequest& request);

// True for NAME as a shell would accept it: [A-Za-z_][A-Za-z0-9_]*.
bool IsVariableName(const std::string& name);

}  // namespace primus::runtime
