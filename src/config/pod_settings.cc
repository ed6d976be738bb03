#include "config/scheduler_settings.h"

namespace primus::config {

// Filled in by the Kubernetes runtime work (#6).
Result<SchedulerSettings> DetectPod(const Environment& env, std::string_view platform) {
  (void)env;
  if (platform != "auto") {
    return Error{ExitCode::kEnvironment, "direct.platform " + std::string(platform) + " is not detected yet"};
  }
  return SchedulerSettings{};
}

}  // namespace primus::config
