#include "agent/platform_setup.h"

#include "platform/host_detect.h"
#include "platform/info_report.h"
#include "platform/launcher_plan_request.h"
#include "platform/placement.h"
#include "platform/visible_devices.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

// One placement per local rank; ranks whose CPUs are unknown stay unbound.
std::vector<WorkerPlacement> PlaceRanks(const platform::HostInfo& host, const Environment& workers,
                                        int nproc_per_node) {
  std::vector<WorkerPlacement> placements;
  std::vector<std::string> unbound;
  for (int rank = 0; rank < nproc_per_node; ++rank) {
    platform::RankPlacement placement = platform::PlaceLocalRank(host, workers, rank, nproc_per_node);
    WorkerPlacement worker;
    if (placement.cpus.empty()) {
      unbound.push_back(std::to_string(rank));
    } else {
      worker.cpus = std::move(placement.cpus);
      worker.omp_num_threads = placement.omp_num_threads;
    }
    placements.push_back(std::move(worker));
  }
  if (!unbound.empty()) {
    log::Warn("--numa-bind: no NUMA CPU list is known for local rank{} {}: not bound",
              unbound.size() == 1 ? "" : "s", Join(unbound, ", "));
  }
  return placements;
}

}  // namespace

Result<PlatformSetup> ApplyPlatformOn(const platform::Roots& roots, const Environment& current,
                                      const config::LauncherConfig& launcher,
                                      std::vector<platform::EnvAssignment> experiment_env, LaunchSpec* spec) {
  PlatformSetup setup;
  setup.host = platform::DetectHost(roots);
  platform::EnvironmentPlanRequest request = platform::PlanRequestFromLauncher(launcher, current, std::move(experiment_env));
  // The addresses the workers will use: the agent owns MASTER_ADDR, and an
  // empty one is loopback on a single node.
  request.master_addr = spec->master_addr;
  request.nnodes = spec->nnodes;
  auto plan = platform::ResolveEnvironment(setup.host, request);  // logs its own warnings
  if (!plan) return plan.error();
  setup.plan = std::move(*plan);
  for (const std::string& note : setup.plan.notes) log::Debug("network: {}", note);

  // GPU visibility as the workers will have it (an --env CUDA_VISIBLE_DEVICES counts).
  Environment workers = setup.plan.ApplyTo(current);
  if (spec->nproc_per_node_auto) {
    if (spec->nproc_per_node_gpu && platform::CountVisibleGpus(setup.host, workers) == 0) {
      return UnavailableError("--nproc-per-node gpu: no GPU is visible on " + setup.host.hostname +
                                  " (torchrun fails here too: 'Cuda is not available')",
                              "give a number of workers, cpu (one per usable CPU) or auto (one per GPU, else one)");
    }
    spec->nproc_per_node = platform::AutoProcessesPerNode(setup.host, workers);
    spec->nproc_per_node_auto = false;
  }
  for (const auto& [name, value] : setup.plan.variables) {
    log::Debug("worker environment: {}={} ({})", name, value.value, value.origin);
    spec->env.erase(name);
    spec->env_overrides[name] = value.value;
  }
  spec->placements.clear();
  if (launcher.GetBool("direct.numa_bind")) {
    spec->placements = PlaceRanks(setup.host, workers, spec->nproc_per_node);
  }
  spec->host = std::make_shared<const platform::HostInfo>(setup.host);  // telemetry's GPUs and routes
  return setup;
}

Result<PlatformSetup> ApplyPlatform(const config::LauncherConfig& launcher,
                                    std::vector<platform::EnvAssignment> experiment_env, LaunchSpec* spec) {
  return ApplyPlatformOn(platform::Roots::FromEnvironment(), ProcessEnvironment(), launcher,
                         std::move(experiment_env), spec);
}

std::string DescribeWorkerEnvironment(const PlatformSetup& setup) {
  return "worker environment (planned variables below; the agent adds RANK, WORLD_SIZE, MASTER_ADDR, ... per "
         "worker; the rest of the user's environment passes through):\n" +
         platform::PlanText(setup.plan);
}

}  // namespace primus::agent
