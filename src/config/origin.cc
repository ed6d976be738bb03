#include "config/origin.h"

#include <utility>

namespace primus::config {

Origin Origin::File(std::string path, int line, int column, std::vector<std::string> extends_chain) {
  return Origin{std::move(path), line, column, std::move(extends_chain)};
}

namespace {
Origin Named(std::string source) {
  Origin origin;
  origin.source = std::move(source);
  return origin;
}
}  // namespace

Origin Origin::Default() { return Named("default"); }
Origin Origin::Env(std::string_view variable) { return Named("env " + std::string(variable)); }
Origin Origin::Flag(std::string_view flag) { return Named("flag " + std::string(flag)); }
Origin Origin::Set() { return Named("--set"); }
Origin Origin::ProgramDefault(std::string_view program) { return Named(std::string(program) + " default"); }
Origin Origin::Scheduler(std::string_view scheduler, std::string_view variables) {
  Origin origin = Named(std::string(scheduler) + " " + std::string(variables));
  origin.from_scheduler = true;
  return origin;
}

std::string Origin::Describe() const {
  std::string text = source;
  if (line > 0) text += ":" + std::to_string(line) + ":" + std::to_string(column);
  if (!extends_chain.empty()) {
    // Innermost first reads naturally: "via the file that extended this one,
    // which was extended by ...".
    text += " (via ";
    for (auto it = extends_chain.rbegin(); it != extends_chain.rend(); ++it) {
      if (it != extends_chain.rbegin()) text += " <- ";
      text += *it;
    }
    text += ")";
  }
  return text;
}

Error ConfigErrorAt(const Origin& where, std::string_view message, std::string hint) {
  return ConfigError(where.Describe() + ": " + std::string(message), std::move(hint));
}

}  // namespace primus::config
