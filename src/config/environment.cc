#include "config/environment.h"

#include "util/process_environment.h"

namespace primus::config {

Environment Environment::FromProcess() {
  std::map<std::string, std::string> process = ProcessEnvironment();
  return Environment(Variables(process.begin(), process.end()));
}

std::optional<std::string> Environment::Get(std::string_view name) const {
  auto it = variables_.find(name);
  if (it == variables_.end()) return std::nullopt;
  return it->second;
}

}  // namespace primus::config
