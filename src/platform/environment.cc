#include "platform/environment.h"

#include <unistd.h>

extern char** environ;

namespace primus::platform {

Environment CurrentEnvironment() {
  Environment environment;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    environment.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return environment;
}

std::optional<std::string> Lookup(const Environment& environment, const std::string& name) {
  auto found = environment.find(name);
  if (found == environment.end()) return std::nullopt;
  return found->second;
}

}  // namespace primus::platform
