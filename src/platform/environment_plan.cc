#include "platform/environment_plan.h"

#include <fmt/format.h>

#include <arpa/inet.h>

#include <cctype>

#include "platform/network_config.h"
#include "platform/profile_chain.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

// Layer priorities; a higher one wins, and within one layer the later value.
enum Priority : int {
  kUserEnvironmentBelowProfiles = -1,
  kBuiltinProfile = 0,
  kNetworkAutoConfig = 1,
  kUserProfile = 2,
  kNamedProfile = 3,
  kUserEnvironment = 4,
  kExperimentEnv = 5,
  kCommandLineEnv = 6,
};

struct Candidate {
  EnvValue value;
  int priority = 0;
};

class Resolution {
 public:
  void Offer(const std::string& name, const std::string& value, const std::string& origin, int priority) {
    auto found = candidates_.find(name);
    if (found == candidates_.end() || priority >= found->second.priority) {
      candidates_[name] = Candidate{{value, origin}, priority};
    }
  }
  void OfferFile(const ProfileFile& file, int priority) {
    for (const ProfileSetting& setting : file.settings) {
      Offer(setting.name, setting.value, fmt::format("{}:{}", file.path, setting.line), priority);
    }
  }
  // Whether something at or above `priority` sets `name`.
  bool SetAtOrAbove(const std::string& name, int priority) const {
    auto found = candidates_.find(name);
    return found != candidates_.end() && found->second.priority >= priority;
  }
  const std::map<std::string, Candidate>& candidates() const { return candidates_; }

 private:
  std::map<std::string, Candidate> candidates_;
};

bool IsEnabled(const std::string& value) {
  if (auto flag = ParseBool(value)) return *flag;
  return ParseInt(value).value_or(0) != 0;
}

// VCCL features and the variable that switches each on.
struct VcclFeature {
  const char* variable;
  const char* description;
};
constexpr VcclFeature kSmFree{"NCCL_PASS_SM", "SM-free P2P"};
constexpr VcclFeature kFaultTolerance{"NCCL_ENABLE_FAULT_TOLERANCE", "fault tolerance"};
constexpr VcclFeature kTelemetry{"NCCL_TELEMETRY_ENABLE", "telemetry"};
const char* const kVcclHint =
    "VCCL's SM-free P2P cannot run with fault tolerance or telemetry: choose --profile vccl-sm-free, or "
    "vccl-prod / vccl-dev, and drop the other setting";

// A named profile's own values (its files in order, the last one winning).
std::map<std::string, EnvValue> OwnValues(const std::vector<LayerFile>& files) {
  std::map<std::string, EnvValue> values;
  for (const LayerFile& layer_file : files) {
    for (const ProfileSetting& setting : layer_file.file.settings) {
      values[setting.name] = {setting.value, fmt::format("{}:{}", layer_file.file.path, setting.line)};
    }
  }
  return values;
}

// Rejects --profile lists that ask for SM-free P2P in one profile and for
// fault tolerance or telemetry in another (or the same) one.
Status CheckNamedProfilesCombine(const std::vector<std::pair<std::string, std::map<std::string, EnvValue>>>& named) {
  for (const auto& [sm_free_name, sm_free_values] : named) {
    auto sm_free = sm_free_values.find(kSmFree.variable);
    if (sm_free == sm_free_values.end() || !IsEnabled(sm_free->second.value)) continue;
    for (const auto& [other_name, other_values] : named) {
      for (const VcclFeature& feature : {kFaultTolerance, kTelemetry}) {
        auto enabled = other_values.find(feature.variable);
        if (enabled == other_values.end() || !IsEnabled(enabled->second.value)) continue;
        return ConfigError(fmt::format("--profile {} and {} cannot be combined: '{}' turns on {} ({}={}, {}) and "
                                       "'{}' turns on {} ({}={}, {})",
                                       sm_free_name, other_name, sm_free_name, kSmFree.description, kSmFree.variable,
                                       sm_free->second.value, sm_free->second.origin, other_name, feature.description,
                                       feature.variable, enabled->second.value, enabled->second.origin),
                           kVcclHint);
      }
    }
  }
  return Status::Ok();
}

// The same rule on the final environment, whatever layer set the values.
Status CheckResolvedVccl(const std::map<std::string, EnvValue>& variables) {
  auto sm_free = variables.find(kSmFree.variable);
  if (sm_free == variables.end() || !IsEnabled(sm_free->second.value)) return Status::Ok();
  for (const VcclFeature& feature : {kFaultTolerance, kTelemetry}) {
    auto enabled = variables.find(feature.variable);
    if (enabled == variables.end() || !IsEnabled(enabled->second.value)) continue;
    return ConfigError(fmt::format("{}={} (from {}) turns on VCCL {}, which cannot run with {} ({}={}, from {})",
                                   kSmFree.variable, sm_free->second.value, sm_free->second.origin,
                                   kSmFree.description, feature.description, feature.variable,
                                   enabled->second.value, enabled->second.origin),
                       kVcclHint);
  }
  return Status::Ok();
}

// True for a dotted-quad IPv4 address.
bool IsIpv4Address(const std::string& text) {
  in_addr address{};
  return ::inet_pton(AF_INET, text.c_str(), &address) == 1;
}

bool IsProfileName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return name.front() != '.';
}

Status OfferAssignments(Resolution& resolution, const std::vector<EnvAssignment>& assignments,
                        const std::string& default_origin, int priority) {
  for (const EnvAssignment& assignment : assignments) {
    if (!IsVariableName(assignment.name)) {
      return ConfigError(fmt::format("'{}' ({}) is not an environment variable name", assignment.name,
                                     assignment.origin.empty() ? default_origin : assignment.origin),
                         "names are letters, digits and '_', not starting with a digit: --env NAME=VALUE");
    }
    resolution.Offer(assignment.name, assignment.value,
                     assignment.origin.empty() ? default_origin : assignment.origin, priority);
  }
  return Status::Ok();
}

}  // namespace

Environment EnvironmentPlan::ApplyTo(const Environment& base) const {
  Environment environment = base;
  for (const auto& [name, value] : variables) environment[name] = value.value;
  return environment;
}

Result<EnvironmentPlan> ResolveEnvironment(const HostInfo& host, const EnvironmentPlanRequest& request) {
  EnvironmentPlan plan;
  Diagnostics diagnostics;
  Resolution resolution;
  const Environment& environment = request.current_environment;

  // 1. Built-in layers, named after what was detected.
  std::vector<std::string> layers = DetectedLayers(host, environment);
  for (const std::string& layer : layers) {
    std::vector<LayerFile> files = LoadBuiltinLayer(layer, diagnostics);
    plan.profile_chain.push_back({layer, files.empty() ? "" : files.front().file.path});
    for (const LayerFile& file : files) resolution.OfferFile(file.file, kBuiltinProfile);
  }

  // 3. The user's profile directories, same layers.
  for (const std::string& dir : request.user_profile_dirs) {
    if (!IsDirectory(dir)) diagnostics.Warn("profile directory " + dir + " does not exist");
  }
  for (const std::string& layer : layers) {
    for (const LayerFile& file : LoadUserLayer(layer, request.user_profile_dirs, diagnostics)) {
      plan.profile_chain.push_back({layer, file.file.path});
      resolution.OfferFile(file.file, kUserProfile);
    }
  }

  // 4. Named profiles.
  std::vector<std::pair<std::string, std::map<std::string, EnvValue>>> named;
  for (const std::string& list : request.profiles) {
    for (const std::string& raw : Split(list, ',')) {
      std::string name(Trim(raw));
      if (name.empty()) continue;
      std::vector<LayerFile> files;
      if (IsProfileName(name)) {
        files = LoadBuiltinLayer("named/" + name, diagnostics);
        for (LayerFile& file : LoadUserLayer("named/" + name, request.user_profile_dirs, diagnostics)) {
          files.push_back(std::move(file));
        }
      }
      if (files.empty()) {
        std::vector<std::string> available = AvailableNamedProfiles(request.user_profile_dirs);
        return ConfigError("unknown profile '" + name + "'" + DidYouMean(name, available),
                           "available profiles: " + Join(available, ", ") +
                               " (user profiles go in <profile dir>/named/<name>.env)");
      }
      for (const LayerFile& file : files) {
        plan.profile_chain.push_back({"named/" + name, file.file.path});
        resolution.OfferFile(file.file, kNamedProfile);
      }
      named.emplace_back(name, OwnValues(files));
    }
  }
  if (Status status = CheckNamedProfilesCombine(named); !status.ok()) return status.error();

  // 6, 7. The experiment's env: section and --env.
  if (Status status = OfferAssignments(resolution, request.experiment_env, "experiment env", kExperimentEnv);
      !status.ok()) {
    return status.error();
  }
  if (Status status = OfferAssignments(resolution, request.command_line_env, "--env", kCommandLineEnv);
      !status.ok()) {
    return status.error();
  }

  // 2. Network auto-config, for what neither the user's layers nor the
  // user's environment set.
  NetworkPlan network = AutoConfigureNetwork(host, request.master_addr, request.nnodes);
  auto user_sets = [&](const std::string& name) {
    return resolution.SetAtOrAbove(name, kUserProfile) || environment.count(name) > 0;
  };
  for (const NetworkSetting& setting : network.settings) {
    if (user_sets(setting.name)) continue;
    // HCAs the user named (sysfs may not show them, e.g. in a container) are
    // not switched off because detection found none.
    if (setting.name == "NCCL_IB_DISABLE" && user_sets("NCCL_IB_HCA")) continue;
    resolution.Offer(setting.name, setting.value, "network auto-config", kNetworkAutoConfig);
  }
  plan.notes = network.notes;
  for (const std::string& warning : network.warnings) diagnostics.Warn(warning);

  // 5. The user's environment keeps what it already has.
  int environment_priority =
      request.profiles_override_environment ? kUserEnvironmentBelowProfiles : kUserEnvironment;
  // Every variable a layer mentions, and those auto-config would have set:
  // a user's own NCCL_SOCKET_IFNAME shows up in the plan with its origin.
  std::vector<std::string> mentioned;
  for (const auto& [name, candidate] : resolution.candidates()) mentioned.push_back(name);
  for (const NetworkSetting& setting : network.settings) mentioned.push_back(setting.name);
  for (const std::string& name : mentioned) {
    if (auto value = Lookup(environment, name)) {
      resolution.Offer(name, *value, "user environment", environment_priority);
    }
  }

  for (const auto& [name, candidate] : resolution.candidates()) plan.variables[name] = candidate.value;
  if (Status status = CheckResolvedVccl(plan.variables); !status.ok()) return status.error();

  for (const char* name : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}) {
    auto found = plan.variables.find(name);
    std::string value = found == plan.variables.end() ? "" : found->second.value;
    if (!value.empty() && value.front() == '=') value.erase(0, 1);
    if (!value.empty() && IsIpv4Address(value)) {
      diagnostics.Warn(fmt::format("{}={} (from {}) is an IP address; it must name an interface (such as eth0)",
                                   name, found->second.value, found->second.origin));
    }
  }

  auto fault_tolerance = plan.variables.find(kFaultTolerance.variable);
  if (fault_tolerance != plan.variables.end() && IsEnabled(fault_tolerance->second.value) &&
      !plan.variables.count("NCCL_IB_HCA") && !environment.count("NCCL_IB_HCA")) {
    diagnostics.Warn("VCCL fault tolerance needs NCCL_IB_HCA, and no usable RDMA port was found to set it");
  }
  plan.warnings = diagnostics.warnings();
  return plan;
}

}  // namespace primus::platform
