#include "agent/launch_spec_from_config.h"

#include "agent/local_gpus.h"
#include "agent/rank_list.h"

namespace primus::agent {
namespace {

bool FromCommandLine(const config::Origin& origin) {
  return origin.source.starts_with("flag ") || origin.source == "--set";
}

Result<int> IntKey(const config::LauncherConfig& launcher, std::string_view key) {
  int64_t value = launcher.GetInt(key);
  if (value < INT32_MIN || value > INT32_MAX) {
    return config::ConfigErrorAt(launcher.OriginOf(key), std::string(key) + " is out of range");
  }
  return static_cast<int>(value);
}

}  // namespace

Result<LaunchSpec> LaunchSpecFromConfig(const config::LauncherConfig& launcher, std::vector<std::string> argv) {
  LaunchSpec spec;
  spec.argv = std::move(argv);
  auto nproc = ResolveNprocPerNode(launcher.GetString("direct.nproc_per_node"));
  if (!nproc) return nproc.error();
  spec.nproc_per_node = *nproc;
  for (auto [key, field] : {std::pair{"direct.nnodes", &spec.nnodes},
                            std::pair{"direct.node_rank", &spec.node_rank},
                            std::pair{"direct.master_port", &spec.master_port},
                            std::pair{"direct.max_restarts", &spec.max_restarts}}) {
    auto value = IntKey(launcher, key);
    if (!value) return value.error();
    *field = *value;
  }
  spec.master_addr = launcher.GetString("direct.master_addr");
  spec.restart_backoff_s = launcher.GetDouble("direct.restart_backoff");
  spec.term_timeout_s = launcher.GetDouble("direct.term_timeout");
  spec.hang_timeout_s = launcher.GetDouble("direct.hang_timeout");
  spec.log_dir = launcher.GetString("direct.log_dir");
  spec.console_prefix = launcher.GetString("direct.console_prefix");
  auto ranks = ParseRankList(launcher.GetString("direct.ranks_filter"));
  if (!ranks) return ranks.error();
  spec.ranks_filter = std::move(*ranks);

  const config::Value* env = launcher.effective().Find("direct.env");
  if (env != nullptr && env->IsMap()) {
    for (const auto& [name, value] : env->AsMap()) {
      auto& target = FromCommandLine(value.origin()) ? spec.env_overrides : spec.env;
      target[name] = value.AsString();
    }
  }
  return spec;
}

}  // namespace primus::agent
