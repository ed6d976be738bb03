// The bridge from the platform layer to the node agent: one call that every
// agent task (run, train) makes between reading its LaunchSpec and starting
// the workers, so that the same launch gets the same explained environment on
// every host. It detects the host, counts `--nproc-per-node auto`, resolves the
// environment plan (profiles, network auto-config, experiment env, --env, the
// user's own environment; see platform/environment_plan.h) and folds it into
// the spec, with per-rank CPU placement under --numa-bind.
#pragma once

#include <string>
#include <vector>

#include "agent/launch_spec.h"
#include "config/launcher_config.h"
#include "util/environment.h"
#include "platform/environment_plan.h"
#include "platform/host_info.h"
#include "platform/roots.h"
#include "util/error.h"

namespace primus::agent {

struct PlatformSetup {
  platform::HostInfo host;
  platform::EnvironmentPlan plan;  // every variable the workers get from profiles/network/experiment/--env, with origins
};

// Detects the host (platform::Roots::FromEnvironment(), so PRIMUS_SYSFS_ROOT
// fixture trees work) and resolves the plan from PlanRequestFromLauncher(launcher,
// current environment, experiment_env) with spec->master_addr and
// spec->nnodes. Then, on `spec`:
//  - nproc_per_node: when spec->nproc_per_node_auto (LaunchSpecFromConfig's
//    "auto"/"gpu"), the GPUs the workers will see (AutoProcessesPerNode on the
//    workers' environment; *_VISIBLE_DEVICES are read, never written), and the
//    flag is cleared. A number set before the call is kept.
//  - env_overrides: every plan variable (the plan already decided precedence:
//    --env > experiment env > user environment > named/user profiles >
//    network auto-config > built-in profiles); those names leave spec->env.
//  - host: what was detected, for telemetry (GPUs, the job's interface).
//  - placements: with direct.numa_bind, one per local rank: its GPU's NUMA
//    CPUs and OMP_NUM_THREADS (platform::PlaceLocalRank); a rank with no
//    known CPUs is not bound. Without it, none.
// Detection and plan warnings are logged (once, by the platform layer).
// Errors: ConfigError (exit 3) for an unknown profile or an impossible VCCL
// combination, or a bad --env name.
// Call it after the last change to nproc_per_node / nnodes / master_addr:
// the placement is for the nproc_per_node it sees (PlanLaunch refuses a
// mismatch).
Result<PlatformSetup> ApplyPlatform(const config::LauncherConfig& launcher,
                                    std::vector<platform::EnvAssignment> experiment_env, LaunchSpec* spec);

// The same on given roots and a given "current" environment: tests, and
// captured trees.
Result<PlatformSetup> ApplyPlatformOn(const platform::Roots& roots, const Environment& current,
                                      const config::LauncherConfig& launcher,
                                      std::vector<platform::EnvAssignment> experiment_env, LaunchSpec* spec);

// For --dry-run: the profile chain and each worker variable with its origin,
// aligned (platform::PlanText, as `info` prints it), and the network notes.
std::string DescribeWorkerEnvironment(const PlatformSetup& setup);

}  // namespace primus::agent
