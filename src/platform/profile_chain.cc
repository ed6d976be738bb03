#include "platform/profile_chain.h"

#include <algorithm>

#include "platform/builtin_profiles.h"
#include "platform/visible_devices.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

constexpr std::string_view kSuffix = ".env";

std::string HomeConfigDir(const Environment& environment) {
  if (auto xdg = Lookup(environment, "XDG_CONFIG_HOME"); xdg && !xdg->empty()) return *xdg;
  if (auto home = Lookup(environment, "HOME"); home && !home->empty()) return JoinPath(*home, ".config");
  return JoinPath(HomeDir(), ".config");
}

}  // namespace

std::vector<std::string> DetectedLayers(const HostInfo& host, const Environment& environment) {
  std::vector<std::string> layers = {"base"};
  std::vector<int> visible = VisibleGpuIndices(host, environment);
  if (visible.empty()) {
    layers.push_back("vendor/cpu");
    return layers;
  }
  const GpuInfo& gpu = host.gpus[static_cast<size_t>(visible.front())];
  layers.push_back("vendor/" + gpu.vendor);
  if (!gpu.arch.empty()) layers.push_back("arch/" + gpu.arch);
  if (!gpu.model.empty()) layers.push_back("model/" + gpu.model);
  return layers;
}

std::vector<std::string> DefaultUserProfileDirs(const Environment& environment) {
  std::vector<std::string> dirs;
  std::string home_dir = JoinPath(HomeConfigDir(environment), "primus/profiles");
  if (IsDirectory(home_dir)) dirs.push_back(home_dir);
  if (auto path = Lookup(environment, "PRIMUS_PROFILE_PATH")) {
    std::vector<std::string> entries = Split(*path, ':');
    for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) {
      if (!entry->empty()) dirs.push_back(*entry);
    }
  }
  return dirs;
}

std::vector<LayerFile> LoadBuiltinLayer(const std::string& layer, Diagnostics& diagnostics) {
  std::string path = "profiles/" + layer + std::string(kSuffix);
  const BuiltinProfileFile* builtin = FindBuiltinProfile(path);
  if (!builtin) return {};
  return {LayerFile{layer, true, ParseProfile(builtin->text, path, diagnostics)}};
}

std::vector<LayerFile> LoadUserLayer(const std::string& layer, const std::vector<std::string>& dirs,
                                     Diagnostics& diagnostics) {
  std::vector<LayerFile> files;
  for (const std::string& dir : dirs) {
    std::string path = JoinPath(dir, layer + std::string(kSuffix));
    if (!PathExists(path)) continue;
    auto text = ReadFile(path);
    if (!text.ok()) {
      diagnostics.Warn("cannot read profile " + path + ": " + text.error().message);
      continue;
    }
    files.push_back(LayerFile{layer, false, ParseProfile(*text, path, diagnostics)});
  }
  return files;
}

std::vector<std::string> AvailableNamedProfiles(const std::vector<std::string>& user_dirs) {
  std::vector<std::string> names;
  auto add = [&names](std::string_view file_name) {
    if (file_name.size() > kSuffix.size() && file_name.substr(file_name.size() - kSuffix.size()) == kSuffix) {
      std::string name(file_name.substr(0, file_name.size() - kSuffix.size()));
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  };
  constexpr std::string_view kNamedPrefix = "profiles/named/";
  for (const BuiltinProfileFile& file : BuiltinProfileFiles()) {
    if (file.path.rfind(kNamedPrefix, 0) == 0) add(file.path.substr(kNamedPrefix.size()));
  }
  for (const std::string& dir : user_dirs) {
    for (const std::string& entry : ListDirectory(JoinPath(dir, "named"))) add(entry);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace primus::platform
