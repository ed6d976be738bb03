#include "config/scheduler_settings.h"

namespace primus::config {

// Filled in by the Slurm runtime work (#6).
Result<SchedulerSettings> DetectSlurm(const Environment& env) {
  (void)env;
  return SchedulerSettings{};
}

}  // namespace primus::config
