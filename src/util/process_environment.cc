#include "util/process_environment.h"

extern char** environ;

namespace primus {

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    variables.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return variables;
}

}  // namespace primus
