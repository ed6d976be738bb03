#include "runtime/container_config_files.h"

#include <algorithm>

#include "util/files.h"

namespace primus::runtime {
namespace {

void Collect(const config::Value& value, const ConfigFileLayers& layers, ConfigFilesInUse* out) {
  if (value.IsMap()) {
    for (const auto& [key, item] : value.AsMap()) Collect(item, layers, out);
    return;
  }
  if (value.IsList()) {
    for (const config::Value& item : value.AsList()) Collect(item, layers, out);
    if (!value.AsList().empty()) return;
  }
  const config::Origin& origin = value.origin();
  if (origin.line <= 0) return;  // not from a file
  auto add = [&](const std::string& file) {
    if (std::find(out->files.begin(), out->files.end(), file) == out->files.end()) out->files.push_back(file);
  };
  add(origin.source);
  for (const std::string& file : origin.extends_chain) add(file);
  // The layer is the outermost file of the chain.
  const std::string& layer = origin.extends_chain.empty() ? origin.source : origin.extends_chain.front();
  if (layer == layers.user_file) out->user_file = true;
  else if (layer != layers.system_file && layer != layers.project_file && out->explicit_file.empty()) {
    out->explicit_file = layer;
  }
}

}  // namespace

ConfigFileLayers DefaultConfigFileLayers(const std::map<std::string, std::string>& env) {
  ConfigFileLayers layers;
  auto xdg = env.find("XDG_CONFIG_HOME");
  std::string config_home = xdg != env.end() && !xdg->second.empty() ? xdg->second : JoinPath(HomeDir(), ".config");
  layers.user_file = JoinPath(config_home, "primus/config.yaml");
  return layers;
}

ConfigFilesInUse FindConfigFilesInUse(const config::Value& effective, const ConfigFileLayers& layers) {
  ConfigFilesInUse out;
  Collect(effective, layers, &out);
  return out;
}

}  // namespace primus::runtime
