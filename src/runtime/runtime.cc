#include "runtime/runtime.h"

#include <algorithm>

namespace primus::runtime {

RuntimeRegistry& RuntimeRegistry::Global() {
  static RuntimeRegistry registry;
  return registry;
}

std::vector<std::string> RuntimeRegistry::Names() const {
  static const std::vector<std::string> kOrder = {"direct", "container", "slurm", "ssh", "k8s"};
  std::vector<std::string> names;
  for (const auto& runtime : items()) names.push_back(runtime->name());
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    auto rank = [](const std::string& n) {
      return std::find(kOrder.begin(), kOrder.end(), n) - kOrder.begin();
    };
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  return names;
}

const std::vector<OptionSpec>& GlobalOptions() {
  using K = OptionSpec::Kind;
  static const std::vector<OptionSpec> options = {
      {{"--config"}, K::kValue, "FILE", "", "launcher configuration file (layered over /etc, ~/.config, ./.primus.yaml)"},
      {{"--set"}, K::kValue, "KEY=VALUE", "", "override one launcher configuration key", true},
      {{"--debug"}, K::kFlag, "", "main.debug", "print every resolved command and environment change"},
      {{"--dry-run"}, K::kFlag, "", "", "print the resolved plan and execute nothing (no hooks, no patches)"},
      {{"--log-level"}, K::kValue, "debug|info|warn|error", "main.log_level", "how much the launcher logs"},
      {{"--quiet", "-q"}, K::kFlag, "", "main.quiet", "only warnings and errors"},
      {{"--log-file"}, K::kValue, "FILE", "",
       "also write everything printed (the launcher's log, the workers' console, an engine's output) to FILE",
       false, false, /*outermost_only=*/true},
      {{"--silent"}, K::kFlag, "", "",
       "nothing on stdout (the workers' console, plans, results); the launcher's log and errors stay on stderr, "
       "and --log-file still gets everything (Primus's runner option)",
       false, false, /*outermost_only=*/true},
      {{"--version"}, K::kFlag, "", "", "print the version and exit"},
      {{"--help", "-h"}, K::kFlag, "", "", "show help for the current level"},
  };
  return options;
}

}  // namespace primus::runtime
