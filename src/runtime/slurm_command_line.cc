#include "runtime/slurm_command_line.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/launcher_plan_request.h"
#include "runtime/slurm_nodes.h"

namespace primus::runtime {
namespace {

// Global options written among a pass-through mode's options: long names
// only, as the command-line grammar accepts them there.
const std::vector<OptionSpec>& LongGlobalOptions() {
  static const std::vector<OptionSpec> table = [] {
    std::vector<OptionSpec> out;
    for (OptionSpec spec : GlobalOptions()) {
      std::erase_if(spec.names, [](const std::string& name) { return !name.starts_with("--"); });
      out.push_back(spec);
    }
    return out;
  }();
  return table;
}

bool InTable(const OptionSpec* spec, const std::vector<OptionSpec>& table) {
  return spec >= table.data() && spec < table.data() + table.size();
}

void AppendOption(const ParsedOption& option, std::vector<std::string>* out) {
  const std::string& name = option.spec->names.front();
  if (name == "--dry-run" || name == "--help" || name == "--version" || option.spec->outermost_only) return;
  if (option.spec->kind == OptionSpec::Kind::kFlag) {
    out->push_back(option.value == "true" ? option.written : option.written + "=false");
  } else {
    out->push_back(option.written);
    out->push_back(option.value);
  }
}

}  // namespace

Result<std::vector<std::string>> SlurmFlagsFromConfig(const config::LauncherConfig& launcher, bool explicit_only) {
  auto wanted = [&](std::string_view key) {
    return !explicit_only || platform::SetExplicitly(launcher.OriginOf(key));
  };
  std::vector<std::string> flags;
  Result<std::string> nodes =
      SlurmNodeCount(launcher.GetString("slurm.nodes"), launcher.OriginOf("slurm.nodes").Describe());
  if (!nodes.ok()) return nodes.error();
  if (wanted("slurm.nodes") && !nodes->empty()) flags.push_back("--nodes=" + *nodes);
  for (auto [key, flag] : {std::pair{"slurm.partition", "--partition="}, std::pair{"slurm.account", "--account="},
                           std::pair{"slurm.time", "--time="}, std::pair{"slurm.qos", "--qos="},
                           std::pair{"slurm.reservation", "--reservation="}}) {
    if (wanted(key) && !launcher.GetString(key).empty()) flags.push_back(flag + launcher.GetString(key));
  }
  if (wanted("slurm.gpus_per_node") && launcher.GetInt("slurm.gpus_per_node") > 0) {
    flags.push_back("--gpus-per-node=" + std::to_string(launcher.GetInt("slurm.gpus_per_node")));
  }
  const config::Value* options = launcher.effective().Find("slurm.options");
  if (options != nullptr && options->IsList()) {
    for (const config::Value& item : options->AsList()) {
      if (!explicit_only || platform::SetExplicitly(item.origin())) flags.push_back(item.ScalarText());
    }
  }
  return flags;
}

std::vector<std::string> GlobalArguments(const RuntimeContext& context, const std::vector<OptionSpec>& mode_options) {
  std::vector<std::string> out;
  const std::vector<std::string>& argv = context.command_line;
  auto leading = ParseOptions(argv, argv.empty() ? 0 : 1, {&GlobalOptions()}, UnknownOptionPolicy::kReject, "primus-cli");
  if (leading.ok()) {
    for (const ParsedOption& option : leading->options) AppendOption(option, &out);
  }
  if (context.invocation != nullptr && context.depth < context.invocation->chain.size()) {
    const std::vector<std::string>& written = context.invocation->chain[context.depth].written;
    auto inside = ParseOptions(written, 0, {&mode_options, &LongGlobalOptions()}, UnknownOptionPolicy::kPassThrough,
                               "mode 'slurm'");
    if (inside.ok()) {
      for (const ParsedOption& option : inside->options) {
        if (InTable(option.spec, LongGlobalOptions())) AppendOption(option, &out);
      }
    }
  }
  return out;
}

std::vector<std::string> InnerCommand(const Invocation& invocation, size_t depth) {
  std::vector<std::string> out;
  if (depth + 1 >= invocation.chain.size()) {
    out = {"direct", "--"};
  } else {
    for (size_t i = depth + 1; i < invocation.chain.size(); ++i) {
      const ModeInvocation& mode = invocation.chain[i];
      out.push_back(mode.mode);
      if (!mode.action.empty()) out.push_back(mode.action);
      out.insert(out.end(), mode.written.begin(), mode.written.end());
      out.push_back("--");
    }
  }
  out.push_back(invocation.task);
  out.insert(out.end(), invocation.task_args.begin(), invocation.task_args.end());
  return out;
}

std::vector<std::string> SrunCommand(const std::vector<std::string>& flags, const std::vector<std::string>& passthrough,
                                     const std::vector<std::string>& node_command) {
  std::vector<std::string> argv = {"srun", "--ntasks-per-node=1", "--kill-on-bad-exit=1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), passthrough.begin(), passthrough.end());
  argv.insert(argv.end(), node_command.begin(), node_command.end());
  return argv;
}

}  // namespace primus::runtime
