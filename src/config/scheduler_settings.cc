#include "config/scheduler_settings.h"

#include <algorithm>
#include <optional>

#include "util/strings.h"

namespace primus::config {

const std::vector<std::string>& PlatformNames() {
  static const std::vector<std::string> names = {"auto", "slurm", "mpi", "pytorchjob", "jobset", "platform", "none"};
  return names;
}

namespace {

bool InsideAgentWorker(const Environment& env) {
  return Lookup(env, "LOCAL_RANK").has_value() && Lookup(env, "TORCHELASTIC_RUN_ID").has_value();
}

// The restarts a scheduler made, carried by the container runtime to the
// primus-cli inside the image, where the scheduler's variables are not.
Result<SchedulerSettings> WithCarriedRestarts(Result<SchedulerSettings> found, const Environment& env) {
  if (!found.ok() || found->restart_count > 0) return found;
  std::optional<std::string> carried = Lookup(env, "PRIMUS_SCHEDULER_RESTARTS");
  if (!carried || carried->empty()) return found;
  std::optional<int64_t> count = ParseInt(*carried);
  if (!count || *count < 0 || *count > 1000000) {
    return Error{ExitCode::kUnavailable,
                 "PRIMUS_SCHEDULER_RESTARTS=" + *carried + " is not a restart count",
                 "it carries SLURM_RESTART_COUNT into a container; unset it or give a whole number"};
  }
  found->restart_count = static_cast<int>(*count);
  return found;
}

Result<SchedulerSettings> DetectConvention(const Environment& env, std::string_view platform) {
  const auto& names = PlatformNames();
  if (std::find(names.begin(), names.end(), platform) == names.end()) {
    return UsageError("direct.platform '" + std::string(platform) + "' is not a known convention",
                      "use one of auto, slurm, mpi, pytorchjob, jobset, platform, none");
  }
  if (platform == "none") return SchedulerSettings{};
  if (platform == "auto" && InsideAgentWorker(env)) return SchedulerSettings{};
  if (platform == "mpi" || platform == "auto") {
    Result<SchedulerSettings> openmpi = DetectOpenMpi(env);
    if (!openmpi.ok() || !openmpi->scheduler.empty()) return openmpi;
  }
  if (platform == "mpi") {
    Result<SchedulerSettings> mpich = DetectMpich(env);
    if (mpich.ok() && mpich->scheduler.empty()) {
      return Error{ExitCode::kUnavailable, "direct.platform is mpi, but no MPI launcher's variables are set "
                                           "(OMPI_COMM_WORLD_SIZE, or PMI_SIZE/PMI_RANK/MPI_LOCALNRANKS)",
                   "start primus-cli with mpirun/mpiexec, or use --platform auto"};
    }
    return mpich;
  }
  if (platform == "slurm" || platform == "auto") {
    Result<SchedulerSettings> slurm = DetectSlurm(env);
    if (!slurm.ok() || !slurm->scheduler.empty() || platform == "slurm") {
      if (slurm.ok() && slurm->scheduler.empty()) {
        return Error{ExitCode::kUnavailable, "direct.platform is slurm, but this is not a Slurm job step",
                     "run it through srun (or `primus-cli slurm srun`), or use --platform auto"};
      }
      return slurm;
    }
  }
  if (platform == "auto") {
    Result<SchedulerSettings> mpich = DetectMpich(env);
    if (!mpich.ok() || !mpich->scheduler.empty()) return mpich;
  }
  return DetectPod(env, platform);
}

}  // namespace

std::optional<std::string> PresentVariable(const Environment& env, std::string_view name) {
  std::optional<std::string> value = Lookup(env, name);
  if (!value) return std::nullopt;
  std::string trimmed(Trim(*value));
  if (trimmed.empty()) return std::nullopt;  // set-but-empty counts as unset, as in the environment layer
  return trimmed;
}

Result<SchedulerSettings> DetectScheduler(const Environment& env, std::string_view platform) {
  return WithCarriedRestarts(DetectConvention(env, platform), env);
}

Value SchedulerLayer(const SchedulerSettings& settings) {
  Value layer = Value::EmptyMap();
  for (const SchedulerSettings::Setting& setting : settings.settings) {
    (void)layer.Set(setting.key,
                    Value::String(setting.value, Origin::Scheduler(settings.scheduler, setting.variables)));
  }
  return layer;
}

}  // namespace primus::config
