// Fuzz target: the flag parser every mode and task uses (util/option_parser),
// with tables shaped like the real ones (values, flags, K=V, short forms,
// repeatable), under both unknown-flag policies.
//
// Input: the command-line tokens, one per line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "util/option_parser.h"
#include "util/strings.h"

namespace {

using primus::OptionSpec;

const std::vector<OptionSpec>& ModeTable() {
  static const std::vector<OptionSpec> table = {
      {{"--nproc-per-node"}, OptionSpec::Kind::kValue, "N", "direct.nproc_per_node", "workers per node"},
      {{"--nnodes", "-N"}, OptionSpec::Kind::kValue, "N", "direct.nnodes", "nodes"},
      {{"--image", "-i"}, OptionSpec::Kind::kValue, "IMAGE", "container.image", "image"},
      {{"--mount"}, OptionSpec::Kind::kValue, "SRC:DST", "container.mounts", "mounts", true},
      {{"--env", "-e"}, OptionSpec::Kind::kKeyValue, "K=V", "direct.env", "variables", true},
      {{"--numa-bind"}, OptionSpec::Kind::kFlag, "", "direct.numa_bind", "bind"},
  };
  return table;
}

const std::vector<OptionSpec>& GlobalTable() {
  static const std::vector<OptionSpec> table = {
      {{"--config"}, OptionSpec::Kind::kValue, "FILE", "", "config file"},
      {{"--set"}, OptionSpec::Kind::kValue, "K=V", "", "override", true},
      {{"--dry-run"}, OptionSpec::Kind::kFlag, "", "", "plan only"},
      {{"--debug", "-d"}, OptionSpec::Kind::kFlag, "", "main.debug", "debug"},
  };
  return table;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> tokens = primus::Split(std::string_view(reinterpret_cast<const char*>(data), size), '\n');
  std::vector<const std::vector<OptionSpec>*> tables = {&ModeTable(), &GlobalTable()};
  for (auto policy : {primus::UnknownOptionPolicy::kReject, primus::UnknownOptionPolicy::kPassThrough}) {
    for (size_t start : {size_t{0}, size_t{1}}) {
      if (start > tokens.size()) continue;
      auto parsed = primus::ParseOptions(tokens, start, tables, policy, "mode 'direct'");
      if (!parsed.ok()) {
        if (parsed.error().message.empty()) std::abort();
        continue;
      }
      // Every token is consumed once: as an option, its value, pass-through, or left for the caller.
      if (parsed->next > tokens.size() || parsed->next < start) std::abort();
      for (const auto& option : parsed->options) {
        if (option.spec == nullptr) std::abort();
      }
    }
  }
  return 0;
}
