#include "platform/launcher_plan_request.h"

#include "platform/profile_chain.h"
#include "util/strings.h"

namespace primus::platform {

bool SetExplicitly(const config::Origin& origin) {
  return origin.source.starts_with("flag") || origin.source.starts_with("--set") || origin.source.starts_with("env") ||
         origin.from_scheduler;
}

EnvironmentPlanRequest PlanRequestFromLauncher(const config::LauncherConfig& launcher, const Environment& current,
                                       std::vector<EnvAssignment> experiment_env) {
  EnvironmentPlanRequest request;
  request.current_environment = current;
  request.user_profile_dirs = DefaultUserProfileDirs(current);
  if (std::string profiles = launcher.GetString("direct.profile"); !profiles.empty()) request.profiles = {profiles};
  request.experiment_env = std::move(experiment_env);
  const config::Value* env = launcher.effective().Find("direct.env");
  if (env && env->IsMap()) {
    for (const auto& [name, value] : env->AsMap()) {
      const config::Origin& origin = value.origin();
      if (SetExplicitly(origin)) {
        request.command_line_env.push_back({name, value.ScalarText(), origin.Describe()});
      } else {
        request.experiment_env.push_back({name, value.ScalarText(), origin.Describe()});
      }
    }
  }
  request.master_addr = launcher.GetString("direct.master_addr");
  if (request.master_addr.empty()) {
    if (auto from_env = Lookup(current, "MASTER_ADDR")) request.master_addr = *from_env;
  }
  request.nnodes = static_cast<int>(launcher.GetInt("direct.nnodes"));
  return request;
}

}  // namespace primus::platform
