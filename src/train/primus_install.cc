#include "train/primus_install.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <re2/re2.h>

#include "snapshot/metadata.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::train {
namespace {

std::string Absolute(const std::string& path, const std::string& current_dir) {
  std::string joined = path.starts_with("/") ? path : JoinPath(current_dir, path);
  std::error_code error;
  std::filesystem::path normal = std::filesystem::weakly_canonical(joined, error);
  return error ? joined : normal.string();
}

}  // namespace

const std::vector<std::string>& UsualPrimusPlaces() {
  // The rocm/primus images put the checkout in /workspace/Primus.
  static const std::vector<std::string> places = {"/workspace/Primus", "/opt/Primus", "/workspace/primus"};
  return places;
}

bool IsPrimusCheckout(const std::string& dir) {
  return !dir.empty() && PathExists(dir + "/primus/cli/main.py") && IsDirectory(dir + "/primus/configs");
}

std::string PrimusVersion(const std::string& root) {
  std::string version;
  if (auto text = ReadRegularFile(root + "/primus/__init__.py", 1 << 20); text.ok()) {
    std::string found;
    if (RE2::PartialMatch(*text, R"re((?m)^__version__\s*=\s*["']([^"'\n]{1,64})["'])re", &found)) version = found;
  }
  if (PathExists(root + "/.git")) {
    if (auto git = snapshot::DetectGit(root); git && !git->commit.empty()) {
      std::string commit = "git " + git->commit.substr(0, 12) + (git->dirty ? " (dirty)" : "");
      version = version.empty() ? commit : version + ", " + commit;
    }
  }
  return version.empty() ? "unknown" : version;
}

PrimusSearch FindPrimus(const Environment& environment, const std::string& configured_path,
                        const std::string& current_dir, const std::vector<std::string>& usual_places) {
  PrimusSearch search;
  // Takes `dir` when it is a checkout; the path is resolved once.
  auto take_if_checkout = [&](const std::string& dir, const std::string& found_by) {
    std::string root = Absolute(dir, current_dir);
    if (!IsPrimusCheckout(root)) return false;
    search.install = PrimusInstall{root, found_by, PrimusVersion(root)};
    return true;
  };
  // A location the user set is used or is an error; it never falls through.
  std::optional<std::string> from_env = Lookup(environment, "PRIMUS_PATH");
  for (const auto& [value, name] : {std::pair{from_env.value_or(""), std::string("PRIMUS_PATH")},
                                    std::pair{configured_path, std::string("train.primus_path")}}) {
    if (value.empty()) {
      search.tried.push_back(name + " (not set)");
      continue;
    }
    if (!take_if_checkout(value, name)) {
      search.broken_setting = name + "=" + value + " has no primus/cli/main.py and primus/configs/";
    }
    return search;
  }
  if (take_if_checkout(current_dir, "the current directory")) return search;
  search.tried.push_back("the current directory " + current_dir);
  for (const std::string& place : usual_places) {
    if (take_if_checkout(place, place)) return search;
    search.tried.push_back(place);
  }
  return search;
}

Result<PrimusInstall> PrimusInstallFor(const Environment& environment, const config::LauncherConfig& launcher) {
  PrimusSearch search = FindPrimus(environment, launcher.GetString("train.primus_path"), CurrentDir(), UsualPrimusPlaces());
  if (search.install) return *search.install;
  const std::string hint =
      "export PRIMUS_PATH=/path/to/Primus (a checkout of github.com/AMD-AGI/Primus, with primus/cli/main.py), or set "
      "train.primus_path in the launcher configuration";
  if (!search.broken_setting.empty()) return UnavailableError(search.broken_setting, hint);
  return UnavailableError("no Primus installation was found (looked at: " + Join(search.tried, "; ") + ")", hint);
}

const std::vector<std::string>& PrimusOnlySubcommands() {
  static const std::vector<std::string> names = {"projection", "data", "node_smoke", "deps"};
  return names;
}

std::vector<std::string> PrimusSubcommands(const PrimusInstall& install) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(install.root + "/primus/cli/subcommands", error)) {
    std::string file = entry.path().filename().string();
    if (file.starts_with("_") || !file.ends_with(".py")) continue;
    names.push_back(file.substr(0, file.size() - 3));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace primus::train
