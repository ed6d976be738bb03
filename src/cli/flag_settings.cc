#include "cli/flag_settings.h"

#include "config/env_file.h"
#include "util/files.h"

namespace primus::cli {
namespace {

const char* const kSingleKeys[][2] = {
    {"direct.nproc_per_node", "1"}, {"direct.nnodes", "1"}, {"direct.node_rank", "0"}};

// The --env FILE entries, in the file's order.
Result<std::vector<config::FlagSetting>> EnvFileSettings(const ParsedOption& option) {
  const std::string& path = option.value;
  if (!PathExists(path)) {
    return UsageError(option.written + " '" + path + "': neither NAME=VALUE nor a file that exists",
                      "write " + option.written + " NAME=VALUE, or " + option.written +
                          " FILE for a file of KEY=VALUE lines");
  }
  auto entries = config::ReadEnvFile(path);
  if (!entries.ok()) return entries.error();
  std::vector<config::FlagSetting> settings;
  for (const config::EnvFileEntry& entry : *entries) {
    settings.push_back({option.spec->config_key, {entry.name + "=" + entry.value},
                        option.written + " " + path + ":" + std::to_string(entry.line)});
  }
  return settings;
}

}  // namespace

Result<std::vector<config::FlagSetting>> FlagSettings(const CommandLine& command) {
  std::vector<config::FlagSetting> from_files, settings;
  const ParsedOption* single = nullptr;
  std::vector<const ParsedOption*> placement;  // --nproc-per-node, --nnodes, --node-rank
  auto add = [&](const ParsedOption& option) -> Status {
    const OptionSpec& spec = *option.spec;
    if (spec.names.front() == "--single" && option.value == "true") single = &option;
    if (spec.config_key.empty()) return Status::Ok();
    for (const auto& [key, value] : kSingleKeys) {
      if (spec.config_key == key) placement.push_back(&option);
    }
    if (spec.kind == OptionSpec::Kind::kKeyValue && option.value.find('=') == std::string::npos) {
      auto entries = EnvFileSettings(option);
      if (!entries.ok()) return entries.error();
      from_files.insert(from_files.end(), entries->begin(), entries->end());
      return Status::Ok();
    }
    // --nnodes MIN:MAX: an elastic job of MIN to MAX nodes (torchrun's form).
    if (spec.config_key == "direct.nnodes" && option.value.find(':') != std::string::npos) {
      std::string value = option.value;
      size_t colon = value.find(':');
      settings.push_back(config::FlagSetting{"direct.min_nnodes", {value.substr(0, colon)}, option.written});
      settings.push_back(config::FlagSetting{spec.config_key, {value.substr(colon + 1)}, option.written});
      return Status::Ok();
    }
    // Map keys (direct.env) take NAME=VALUE as the value; list keys append.
    settings.push_back(config::FlagSetting{spec.config_key, {option.value}, option.written});
    return Status::Ok();
  };
  for (const ParsedOption& option : command.globals.config_flags) {
    if (Status added = add(option); !added.ok()) return added.error();
  }
  for (const runtime::ModeInvocation& mode : command.invocation.chain) {
    for (const ParsedOption& option : mode.options) {
      if (Status added = add(option); !added.ok()) return added.error();
    }
  }
  if (single != nullptr) {
    for (const ParsedOption* option : placement) {
      for (const auto& [key, value] : kSingleKeys) {
        if (option->spec->config_key == key && option->value != value) {
          return UsageError(single->written + " runs one worker on this node alone, but " + option->written + " " +
                                option->value + " asks for more",
                            "drop " + single->written + ", or drop " + option->written);
        }
      }
    }
    for (const auto& [key, value] : kSingleKeys) settings.push_back({key, {value}, single->written});
  }
  // A torchrun command line's settings (cli/torchrun_command.h), read as direct's flags.
  settings.insert(settings.end(), command.translated_settings.begin(), command.translated_settings.end());
  // Files first: an explicit NAME=VALUE wins over a file wherever it is written.
  from_files.insert(from_files.end(), settings.begin(), settings.end());
  return from_files;
}

}  // namespace primus::cli
