#include "config/scheduler_settings.h"

#include <algorithm>

namespace primus::config {

const std::vector<std::string>& PlatformNames() {
  static const std::vector<std::string> names = {"auto", "slurm", "pytorchjob", "jobset", "platform", "none"};
  return names;
}

namespace {

bool InsideAgentWorker(const Environment& env) {
  return env.Get("LOCAL_RANK").has_value() && env.Get("TORCHELASTIC_RUN_ID").has_value();
}

}  // namespace

Result<SchedulerSettings> DetectScheduler(const Environment& env, std::string_view platform) {
  const auto& names = PlatformNames();
  if (std::find(names.begin(), names.end(), platform) == names.end()) {
    return UsageError("direct.platform '" + std::string(platform) + "' is not a known convention",
                      "use one of auto, slurm, pytorchjob, jobset, platform, none");
  }
  if (platform == "none") return SchedulerSettings{};
  if (platform == "auto" && InsideAgentWorker(env)) return SchedulerSettings{};
  if (platform == "slurm" || platform == "auto") {
    Result<SchedulerSettings> slurm = DetectSlurm(env);
    if (!slurm.ok() || !slurm->scheduler.empty() || platform == "slurm") {
      if (slurm.ok() && slurm->scheduler.empty()) {
        return Error{ExitCode::kEnvironment, "direct.platform is slurm, but this is not a Slurm job step",
                     "run it through srun (or `primus-cli slurm srun`), or use --platform auto"};
      }
      return slurm;
    }
  }
  return DetectPod(env, platform);
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
