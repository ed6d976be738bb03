// ResolveEnvironment: the environment every worker on this node starts with,
// and where each variable came from. Layers, lowest priority first:
//
//   1. built-in profiles: base, vendor, arch, model (profiles/, compiled in)
//   2. network auto-config (NCCL_SOCKET_IFNAME, NCCL_IB_HCA, ...)
//   3. user profile directories, same layers (site and personal tuning)
//   4. named profiles (--profile NAME[,NAME...]), in the order given
//   5. the user's environment: a variable already set is kept
//   6. the experiment's env: section
//   7. --env K=V
//
// With profiles_override_environment the user's environment drops below
// layer 1. Network auto-config never replaces anything the user set (layers
// 3-7). Only variables some layer mentions are in the plan; the rest of the
// user's environment passes through untouched, and the *_VISIBLE_DEVICES
// variables are never set by any built-in layer.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "util/environment.h"
#include "platform/host_info.h"
#include "util/error.h"

namespace primus::platform {

struct EnvAssignment {
  std::string name;
  std::string value;
  std::string origin;  // e.g. "exp.yaml:14"; empty: "experiment env" or "--env"
};

struct EnvironmentPlanRequest {
  Environment current_environment;            // what primus-cli was started with
  std::vector<std::string> profiles;          // --profile values (each may hold a comma list)
  std::vector<std::string> user_profile_dirs; // lowest priority first; see DefaultUserProfileDirs
  std::vector<EnvAssignment> experiment_env;  // the experiment YAML's env:
  std::vector<EnvAssignment> command_line_env;  // --env K=V, in order
  std::string master_addr;                    // may be empty for a single-node job
  int nnodes = 1;
  bool profiles_override_environment = false;
};

struct EnvValue {
  std::string value;
  std::string origin;  // "profiles/arch/gfx942.env:7", "user environment", "network auto-config", "--env"
};

struct ProfileLayer {
  std::string layer;  // "base", "vendor/amd", "arch/gfx942", "model/MI300X", "named/vccl-prod"
  std::string file;   // the file applied; "" when the layer has no file anywhere
};

struct EnvironmentPlan {
  std::vector<ProfileLayer> profile_chain;  // in the order applied
  std::map<std::string, EnvValue> variables;
  std::vector<std::string> notes;     // how network values were chosen
  std::vector<std::string> warnings;  // malformed profile lines, unusable network, ...

  // `base` with every planned variable set: the workers' environment.
  Environment ApplyTo(const Environment& base) const;
};

// Fails (ConfigError) for an unknown --profile name and for settings VCCL
// cannot combine (SM-free P2P with fault tolerance or telemetry).
Result<EnvironmentPlan> ResolveEnvironment(const HostInfo& host, const EnvironmentPlanRequest& request);

}  // namespace primus::platform
