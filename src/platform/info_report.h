// What `primus-cli info [--json]` prints: the detected host and the resolved
// environment with the origin of every variable. The JSON keys are a stable
// interface (scripts and the preflight task read them): gpus, nics,
// profile_chain and env are always present.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "platform/environment_plan.h"
#include "platform/host_info.h"

namespace primus::platform {

nlohmann::ordered_json InfoJson(const HostInfo& host, const EnvironmentPlan& plan);
std::string InfoText(const HostInfo& host, const EnvironmentPlan& plan);

// The plan part of InfoText: the profile chain, every variable with its
// origin (aligned) and the network notes. `--dry-run` of the agent tasks
// prints it too, so both explain a launch the same way.
std::string PlanText(const EnvironmentPlan& plan);

}  // namespace primus::platform
