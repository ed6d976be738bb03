#include "cli/plan.h"

#include <fmt/format.h>

#include "config/launcher_config.h"
#include "config/value.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

std::string Render(const config::Value& value) {
  if (value.IsList()) {
    std::vector<std::string> items;
    for (const auto& item : value.AsList()) items.push_back(Render(item));
    return "[" + Join(items, ", ") + "]";
  }
  if (value.IsMap()) {
    std::vector<std::string> items;
    for (const auto& [key, item] : value.AsMap()) items.push_back(key + "=" + Render(item));
    return "{" + Join(items, ", ") + "}";
  }
  return value.ScalarText();
}

bool IsEmpty(const config::Value& value) {
  if (value.IsNull()) return true;
  if (value.IsString()) return value.AsString().empty();
  if (value.IsList()) return value.AsList().empty();
  if (value.IsMap()) return value.AsMap().empty();
  return false;
}

// The origin of a map or list shown as the origins of its entries.
std::string OriginOf(const config::Value& value) {
  if ((value.IsList() || value.IsMap()) && value.origin().source.empty()) {
    std::vector<std::string> origins;
    auto add = [&](const config::Value& item) {
      std::string described = item.origin().Describe();
      if (std::find(origins.begin(), origins.end(), described) == origins.end()) origins.push_back(described);
    };
    if (value.IsList()) for (const auto& item : value.AsList()) add(item);
    else for (const auto& [key, item] : value.AsMap()) add(item);
    return Join(origins, "; ");
  }
  return value.origin().Describe();
}

}  // namespace

std::string FormatPlan(const runtime::Invocation& invocation, const config::LauncherConfig& launcher) {
  std::string out = "dry run: the plan below is resolved; nothing is executed (no hooks, no patches)\n";
  for (size_t depth = 0; depth < invocation.chain.size(); ++depth) {
    const runtime::ModeInvocation& mode = invocation.chain[depth];
    out += fmt::format("mode {}: {}{}{}{}\n", depth + 1, mode.mode, mode.action.empty() ? "" : " " + mode.action,
                       invocation.implicit_direct ? " (implicit: 'primus-cli <task>' runs direct)" : "",
                       invocation.program.empty() ? "" : " (" + invocation.program + "'s command line, read as direct -- run)");
    if (const config::Value* section = launcher.effective().Find(mode.mode); section && section->IsMap()) {
      for (const auto& [key, value] : section->AsMap()) {
        if (IsEmpty(value)) continue;
        out += fmt::format("  {:<30} {:<30} {}\n", mode.mode + "." + key, Render(value), OriginOf(value));
      }
    }
    for (const ParsedOption& option : mode.options) {
      if (!option.spec->config_key.empty()) continue;
      out += fmt::format("  {:<30} {:<30} flag {}\n", option.spec->names.front(), option.value, option.written);
    }
    if (!mode.passthrough.empty()) {
      out += fmt::format("  {:<30} {}\n", "passed through", ShellJoin(mode.passthrough));
    }
  }
  for (const std::string& note : invocation.notes) out += "note: " + note + "\n";
  out += "task: " + invocation.task + "\n";
  out += "task arguments: " + (invocation.task_args.empty() ? std::string("(none)") : ShellJoin(invocation.task_args)) + "\n";
  return out;
}

}  // namespace primus::cli
