// The launcher configuration files whose values are in effect, so that the
// primus-cli inside the container reads the same ones (their values keep
// their file precedence; see container_inner.h). Each file that supplied a
// value, and every file of its `extends:` chain, is mounted read-only at
// its own path. The layers are found inside where the outer one found them:
// /etc/primus/config.yaml at the same path, ./.primus.yaml through the
// mounted working directory, the --config file by passing --config on, and
// the user's file through XDG_CONFIG_HOME pointing at the host's
// configuration directory (mounted).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/value.h"

namespace primus::runtime {

struct ConfigFileLayers {
  std::string system_file = "/etc/primus/config.yaml";
  std::string user_file;     // <config home>/primus/config.yaml
  std::string project_file = "./.primus.yaml";
};

// The layers' paths as LauncherSources::FromProcess computes them.
ConfigFileLayers DefaultConfigFileLayers(const std::map<std::string, std::string>& env);

struct ConfigFilesInUse {
  std::vector<std::string> files;  // every file to mount (as written in the origins)
  std::string explicit_file;       // the --config file, "" when none supplied a value
  bool user_file = false;          // the user's file supplied a value
};

ConfigFilesInUse FindConfigFilesInUse(const config::Value& effective, const ConfigFileLayers& layers);

}  // namespace primus::runtime
