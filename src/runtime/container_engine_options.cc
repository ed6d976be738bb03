#include "runtime/container_engine_options.h"

#include <algorithm>

#include "util/strings.h"

namespace primus::runtime {
namespace {

// direct's flags that docker and podman `run` have too: they stay engine options.
bool AlsoAnEngineFlag(const std::string& flag) { return flag == "--platform" || flag == "--env"; }

const OptionSpec* DirectSpec(const std::string& flag, const std::vector<OptionSpec>& direct_options) {
  for (const OptionSpec& spec : direct_options) {
    if (std::find(spec.names.begin(), spec.names.end(), flag) != spec.names.end()) return &spec;
  }
  return nullptr;
}

std::string InnerHint(const std::string& flag, const OptionSpec& spec) {
  std::string example = flag + (spec.kind == OptionSpec::Kind::kFlag ? "" : " " + spec.value_name);
  return "options of direct go after '--': primus-cli container [container options] -- direct " + example +
         " -- <task> [args]";
}

}  // namespace

Result<std::vector<EngineOption>> CheckEngineOptions(const std::vector<std::string>& passthrough,
                                                     const std::vector<OptionSpec>& direct_options) {
  std::vector<EngineOption> options;
  for (const std::string& token : passthrough) {
    bool is_flag = token.size() > 1 && token[0] == '-';
    if (!is_flag) {
      if (options.empty()) {
        return UsageError("container: '" + token + "' is neither an option nor the value of one",
                          "engine options are written --flag VALUE; the task goes after '--'");
      }
      options.back().tokens.push_back(token);
      continue;
    }
    std::string name = token.substr(0, token.find('='));
    std::string dashed = name;
    if (dashed.starts_with("--")) std::replace(dashed.begin() + 2, dashed.end(), '_', '-');
    const OptionSpec* direct = DirectSpec(dashed, direct_options);
    if (dashed != name) {
      std::string hint = direct ? InnerHint(dashed, *direct)
                                : "engine options are spelled with '-' (" + dashed + "); primus-cli container --help lists ours";
      return UsageError("container: " + name + " cannot be an option of docker or podman (their names have no '_')", hint);
    }
    if (direct != nullptr && !AlsoAnEngineFlag(dashed)) {
      return UsageError("container: " + name + " is an option of direct, not of the container engine", InnerHint(name, *direct));
    }
    options.push_back({name, {token}});
  }
  return options;
}

std::string DescribeEngineOption(const EngineOption& option, std::string_view engine) {
  return "passing " + ShellJoin(option.tokens) + " to " + std::string(engine) +
         " as an engine option (primus-cli does not know it)";
}

}  // namespace primus::runtime
