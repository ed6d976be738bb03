// Fuzz target: configuration text through the whole config layer, as
// `train --config F` and `--config F` read it: YAML with anchors, aliases and
// merge keys, `${VAR}` interpolation, `extends:` of other files, schema
// validation, deep merge, and the writers (YAML that must read back, JSON).
//
// Input: the experiment file's text, then optionally "#%base" on a line of
// its own and the text of base.yaml, which the first part may extend
// (`extends: base.yaml`), as may base.yaml itself (a cycle).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "util/environment.h"
#include "config/launcher_schema.h"
#include "config/merge.h"
#include "config/yaml_loader.h"
#include "fuzz_support.h"
#include "util/files.h"

using primus::Environment;
using primus::config::Value;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts = primus::fuzz::SplitParts(input, "#%base");
  const std::string& dir = primus::fuzz::ScratchDir();
  if (parts.size() > 1) {
    (void)primus::fuzz::WriteScratchFile(dir + "/base.yaml", parts[1]);
  } else {
    (void)primus::fuzz::WriteScratchFile(dir + "/base.yaml", "base_key: 1\n");
  }
  static const Environment env({{"HOME", "/root"}, {"SET", "value"}, {"EMPTY", ""}, {"NUM", "42"}});

  primus::Result<Value> loaded = primus::config::LoadYamlString(parts[0], dir + "/exp.yaml", env);
  if (!loaded.ok()) {
    if (loaded.error().message.empty()) std::abort();  // every error names what went wrong
    return 0;
  }
  Value layer = *loaded;
  (void)primus::config::LauncherSchema().Validate(&layer, primus::config::ScalarSource::kTyped);
  Value merged = primus::config::Merge(primus::config::LauncherSchema().Defaults(), *loaded);
  (void)merged.ToJson().dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);

  // What we write must read back as the same tree (NaN aside: it is not equal to itself).
  std::string yaml = loaded->ToYaml(/*escape_dollars_for_reload=*/true);
  if (yaml.find(".nan") != std::string::npos) return 0;
  primus::Result<Value> reread = primus::config::LoadYamlString(yaml, dir + "/written.yaml", env);
  if (!reread.ok() || !(*reread == *loaded)) {
    std::fprintf(stderr, "written YAML does not read back:\n%s\n%s\n", yaml.c_str(),
                 reread.ok() ? "(a different tree)" : reread.error().message.c_str());
    std::abort();
  }
  return 0;
}
