#include "runtime/container_env.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace primus::runtime {

const std::vector<std::string>& AlwaysForwardedVariables() {
  static const std::vector<std::string> names = {"PRIMUS_JOB_TOKEN", "PRIMUS_JOB_ID"};
  return names;
}

bool IsVariableName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

Result<EnvForwarding> PlanEnvironment(const EnvRequest& request) {
  EnvForwarding plan;
  std::set<std::string> seen;
  auto forward = [&](const std::string& name) {
    if (seen.insert(name).second) plan.names.push_back(name);
  };

  for (const std::string& entry : request.entries) {
    size_t equals = entry.find('=');
    std::string name = entry.substr(0, equals);
    if (!IsVariableName(name)) {
      return UsageError(request.entries_origin + ": '" + entry + "' is not NAME=VALUE or NAME",
                        "write --env NAME=VALUE to set a variable in the container, or --env NAME to pass this one on");
    }
    if (equals != std::string::npos) {
      plan.values[name] = entry.substr(equals + 1);
    } else if (!request.host.count(name) && !plan.values.count(name)) {
      plan.warnings.push_back(request.entries_origin + " " + name + ": " + name +
                              " is not set here, so the container does not get it");
      continue;
    }
    forward(name);
  }
  for (const std::string& name : AlwaysForwardedVariables()) {
    if (request.host.count(name)) forward(name);
  }
  for (const auto& [name, value] : request.launcher) {
    if (seen.count(name)) continue;
    if (!request.host.count(name)) plan.values[name] = value;
    forward(name);
  }
  for (const auto& [name, value] : request.host) {  // std::map: sorted by name
    for (const std::string& prefix : request.prefixes) {
      if (!prefix.empty() && name.starts_with(prefix)) {
        forward(name);
        break;
      }
    }
  }
  return plan;
}

}  // namespace primus::runtime
