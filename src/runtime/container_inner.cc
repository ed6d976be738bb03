#include "runtime/container_inner.h"

#include "config/launcher_config.h"
#include "config/value.h"
#include "platform/launcher_plan_request.h"

namespace primus::runtime {
namespace {

const OptionSpec* FlagFor(const std::vector<OptionSpec>* table, const std::string& key) {
  if (table == nullptr) return nullptr;
  for (const OptionSpec& spec : *table) {
    if (spec.config_key == key) return &spec;
  }
  return nullptr;
}

// The long name of a flag ("--nproc-per-node" rather than a short alias).
std::string LongName(const OptionSpec& spec) {
  for (const std::string& name : spec.names) {
    if (name.starts_with("--")) return name;
  }
  return spec.names.front();
}

class InnerCommand {
 public:
  explicit InnerCommand(const InnerCommandRequest& inputs) : inputs_(inputs) {}

  // Whether the inner primus-cli would not see this value by itself.
  bool MustPass(const config::Origin& origin) const {
    if (!platform::SetExplicitly(origin)) return false;  // default or a mounted file
    if (origin.source.starts_with("env ")) return !inputs_.forwarded_env.count(origin.source.substr(4));
    return true;
  }

  void AddScalar(const std::string& key, const config::Value& value, std::vector<std::string>* out) {
    const OptionSpec* spec = FlagFor(key.starts_with("main.") ? inputs_.global_options : inputs_.direct_options, key);
    std::string text = value.ScalarText();
    if (spec && spec->kind == OptionSpec::Kind::kFlag) {
      if (text == "true") {
        out->push_back(LongName(*spec));
        return;
      }
      spec = nullptr;  // false: only --set can say it
    }
    if (spec && spec->kind == OptionSpec::Kind::kValue) {
      out->push_back(LongName(*spec));
      out->push_back(text);
      return;
    }
    globals_.push_back("--set");
    globals_.push_back(key + "=" + text);
  }

  void AddKey(const std::string& key, const config::Value& value, std::vector<std::string>* out) {
    if (value.IsMap()) {
      const OptionSpec* spec = FlagFor(inputs_.direct_options, key);
      for (const auto& [name, item] : value.AsMap()) {
        if (!MustPass(item.origin())) continue;
        if (spec && spec->kind == OptionSpec::Kind::kKeyValue) {
          out->push_back(LongName(*spec));
          out->push_back(name + "=" + item.ScalarText());
        } else {
          globals_.push_back("--set");
          globals_.push_back(key + "." + name + "=" + item.ScalarText());
        }
      }
      return;
    }
    if (value.IsList()) {
      bool pass = MustPass(value.origin());
      for (const config::Value& item : value.AsList()) pass = pass || MustPass(item.origin());
      const OptionSpec* spec = FlagFor(inputs_.direct_options, key);
      if (!pass || !spec) return;
      for (const config::Value& item : value.AsList()) {
        out->push_back(LongName(*spec));
        out->push_back(item.ScalarText());
      }
      return;
    }
    if (value.IsNull() || !MustPass(value.origin())) return;
    AddScalar(key, value, out);
  }

  std::vector<std::string> Build() {
    const config::LauncherConfig& launcher = *inputs_.launcher;
    const bool scheduler_found = !launcher.scheduler().scheduler.empty();
    std::vector<std::string> main_flags, direct_flags;
    for (const char* section : {"main", "direct"}) {
      const config::Value* values = launcher.effective().Find(section);
      if (values == nullptr || !values->IsMap()) continue;
      for (const auto& [name, value] : values->AsMap()) {
        std::string key = std::string(section) + "." + name;
        if (key == "direct.platform" && scheduler_found) continue;
        AddKey(key, value, section == std::string("main") ? &main_flags : &direct_flags);
      }
    }
    if (scheduler_found) {
      const OptionSpec* platform = FlagFor(inputs_.direct_options, "direct.platform");
      if (platform) direct_flags.insert(direct_flags.begin(), {LongName(*platform), "none"});
      else globals_.insert(globals_.end(), {"--set", "direct.platform=none"});
    }
    // Flags of an explicit inner `direct` that map to no key (--standalone).
    const Invocation& invocation = *inputs_.invocation;
    if (inputs_.depth + 1 < invocation.chain.size() && invocation.chain[inputs_.depth + 1].mode == "direct") {
      for (const ParsedOption& option : invocation.chain[inputs_.depth + 1].options) {
        if (!option.spec->config_key.empty()) continue;
        direct_flags.push_back(LongName(*option.spec));
        if (option.spec->kind != OptionSpec::Kind::kFlag) direct_flags.push_back(option.value);
      }
    }

    std::vector<std::string> args;
    if (!inputs_.config_file.empty()) args.insert(args.end(), {"--config", inputs_.config_file});
    args.insert(args.end(), globals_.begin(), globals_.end());
    args.insert(args.end(), main_flags.begin(), main_flags.end());
    args.push_back("direct");
    args.insert(args.end(), direct_flags.begin(), direct_flags.end());
    args.push_back("--");
    args.push_back(invocation.task);
    args.insert(args.end(), invocation.task_args.begin(), invocation.task_args.end());
    return args;
  }

 private:
  const InnerCommandRequest& inputs_;
  std::vector<std::string> globals_;  // --set KEY=VALUE for keys without a flag
};

}  // namespace

std::vector<std::string> InnerArguments(const InnerCommandRequest& inputs) { return InnerCommand(inputs).Build(); }

}  // namespace primus::runtime
