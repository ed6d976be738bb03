// The distributed settings a scheduler put into this process's environment:
// a Slurm job step (SLURM_*), an MPI launcher's ranks (Open MPI's mpirun,
// MPICH's Hydra: one agent per rank, mpi_settings.cc), or a Kubernetes pod
// under one of the in-pod conventions (Kubeflow PyTorchJob's PET_*, an
// Indexed Job / JobSet's JOB_COMPLETION_INDEX, the commercial platforms'
// WORLD_SIZE = nodes and RANK = node index). They become one configuration
// layer, just above the files and below PRIMUS_*/PET_* variables, --set and
// flags, so a value the user gave always wins and `config show --origin`
// names the variable.
//
// Which convention is read: direct.platform (auto, slurm, mpi, pytorchjob,
// jobset, platform, none). auto tries Open MPI, Slurm, MPICH/Hydra, then
// PyTorchJob, JobSet, platform; it detects nothing inside a worker started
// by an agent (LOCAL_RANK and TORCHELASTIC_RUN_ID set), so a nested launch
// does not mistake its own rank variables for a scheduler's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.h"
#include "config/value.h"
#include "util/error.h"

namespace primus::config {

struct SchedulerSettings {
  struct Setting {
    std::string key;        // a launcher key: "direct.nnodes"
    std::string value;      // as text, validated like an environment variable
    std::string variables;  // what it was derived from: "SLURM_STEP_NODELIST"
  };
  std::string scheduler;  // "slurm", "openmpi", "mpich", "pytorchjob", "jobset", "platform"; empty: none detected
  std::vector<Setting> settings;
  std::string job_id;     // the scheduler's job id (stable across the job's nodes), when known
  int restart_count = 0;  // restarts the scheduler already made (SLURM_RESTART_COUNT,
                          // or PRIMUS_SCHEDULER_RESTARTS inside a container)
  int agents_on_this_host = 1;  // an MPI launcher's ranks on this host (more than one: each starts its workers)
};

// A scheduler's variable, trimmed; nullopt when unset or set but empty (as
// in the environment layer). The detectors read their variables with it.
std::optional<std::string> PresentVariable(const Environment& env, std::string_view name);

// The names direct.platform accepts.
const std::vector<std::string>& PlatformNames();

// What `platform` (one of PlatformNames()) finds in `env`. An Error (code 4)
// when the convention was asked for explicitly and its variables are missing
// or malformed, or when auto finds a scheduler whose variables contradict
// each other; the message names the variables.
Result<SchedulerSettings> DetectScheduler(const Environment& env, std::string_view platform);

// One detector per convention; empty `scheduler` when its variables are absent.
Result<SchedulerSettings> DetectSlurm(const Environment& env);                                  // slurm_settings.cc
Result<SchedulerSettings> DetectPod(const Environment& env, std::string_view platform);        // pod_settings.cc
Result<SchedulerSettings> DetectOpenMpi(const Environment& env);                                // mpi_settings.cc
Result<SchedulerSettings> DetectMpich(const Environment& env);                                  // mpi_settings.cc

// The settings as a configuration layer (origins "slurm SLURM_NODEID" etc.).
Value SchedulerLayer(const SchedulerSettings& settings);

}  // namespace primus::config
