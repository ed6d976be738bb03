#include "util/environment.h"

extern char** environ;

namespace primus {

Environment ProcessEnvironment() {
  Environment variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    variables.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return variables;
}

std::vector<std::string> EnvironmentEntries(const Environment& environment) {
  std::vector<std::string> entries;
  entries.reserve(environment.size());
  for (const auto& [name, value] : environment) entries.push_back(name + "=" + value);
  return entries;
}

std::optional<std::string> Lookup(const Environment& environment, std::string_view name) {
  auto found = environment.find(std::string(name));
  if (found == environment.end()) return std::nullopt;
  return found->second;
}

}  // namespace primus
