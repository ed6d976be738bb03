// A Primus installation: the public Primus project's checkout (or unpacked
// package) whose Python CLI, primus/cli/main.py, runs Primus-format
// experiments (modules: <name>: {framework, config, model, overrides}) for
// every framework Primus supports. Found, in order, from PRIMUS_PATH, the
// launcher key train.primus_path, the current directory when it is a
// checkout, and the places the Primus images put it (/workspace/Primus, ...).
// Where it came from and its version (git commit, else the package's
// __version__) are shown by `info`, `--dry-run` and recorded in the snapshot.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/environment.h"
#include "config/launcher_config.h"
#include "util/error.h"

namespace primus::train {

struct PrimusInstall {
  std::string root;      // the directory holding primus/cli/main.py
  std::string found_by;  // "PRIMUS_PATH", "train.primus_path", "the current directory", "/workspace/Primus"
  std::string version;   // "26.5, git fd1eeabbad15 (dirty)", "26.5", or "unknown"

  std::string main_py() const { return root + "/primus/cli/main.py"; }
  std::string configs_dir() const { return root + "/primus/configs"; }
};

struct PrimusSearch {
  std::optional<PrimusInstall> install;
  // Every place looked at, and why it was not taken, for the error message.
  std::vector<std::string> tried;
  // A set location (PRIMUS_PATH, train.primus_path) that is not a checkout:
  // an error of its own, never silently skipped for the next place.
  std::string broken_setting;
};

// The places the Primus images and docs use, after the set ones.
const std::vector<std::string>& UsualPrimusPlaces();

// configured_path: the launcher's train.primus_path ("" when unset).
// usual_places: UsualPrimusPlaces() outside tests.
PrimusSearch FindPrimus(const Environment& environment, const std::string& configured_path,
                        const std::string& current_dir, const std::vector<std::string>& usual_places);

// FindPrimus with the launcher's settings and this process's places; none
// found is an UnavailableError (exit 4) that lists where it looked and how
// to point at one.
Result<PrimusInstall> PrimusInstallFor(const Environment& environment, const config::LauncherConfig& launcher);

bool IsPrimusCheckout(const std::string& dir);

// "26.5" from primus/__init__.py's __version__, plus the git commit when the
// installation is a git checkout.
std::string PrimusVersion(const std::string& root);

// Subcommands of Primus's public CLI that primus-cli has no task for
// (projection, data, node_smoke, deps): the command line sends them to the
// `primus` task, which runs them through the installation.
const std::vector<std::string>& PrimusOnlySubcommands();

// The subcommands of Primus's own CLI (primus/cli/subcommands/*.py, not
// starting with '_'): train, benchmark, preflight, projection, data, ...
std::vector<std::string> PrimusSubcommands(const PrimusInstall& install);

}  // namespace primus::train
