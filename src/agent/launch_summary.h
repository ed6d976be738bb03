// What a LaunchSpec would start, in words, for --dry-run: the world layout
// (nodes x workers, this node's global ranks), the master address and port
// ("free port chosen at launch" when the agent will pick one), the worker
// command, its role and run id when chosen, which ranks and streams reach
// the console, torchrun's OMP_NUM_THREADS rule when asked for, and the CPU
// binding of each local rank under --numa-bind.
// Nothing is checked or resolved here; PlanLaunch does that at launch.
#pragma once

#include <string>

#include "agent/launch_spec.h"

namespace primus::agent {

std::string DescribeLaunch(const LaunchSpec& spec);

}  // namespace primus::agent
