#include "platform/environment.h"

#include "util/process_environment.h"

namespace primus::platform {

Environment CurrentEnvironment() {
  return ProcessEnvironment();
}

std::optional<std::string> Lookup(const Environment& environment, const std::string& name) {
  auto found = environment.find(name);
  if (found == environment.end()) return std::nullopt;
  return found->second;
}

}  // namespace primus::platform
