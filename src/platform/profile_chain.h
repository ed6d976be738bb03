// Which profile files apply to this node, and where they are found. The
// chain's layers are named after what was detected: "base", "vendor/amd",
// "arch/gfx942", "model/MI300X", plus "named/<name>" for --profile. Each layer
// is the built-in file profiles/<layer>.env (compiled in) and, from the user
// profile directories, <dir>/<layer>.env. A model without a file simply
// contributes nothing, so a new model runs with its architecture's settings.
#pragma once

#include <string>
#include <vector>

#include "util/environment.h"
#include "platform/host_info.h"
#include "platform/profile_file.h"
#include "platform/sysfs_files.h"

namespace primus::platform {

// The detected layers, most general first. Keys come from the job's first
// visible GPU; a host without visible GPUs is vendor "cpu".
std::vector<std::string> DetectedLayers(const HostInfo& host, const Environment& environment);

// The user profile directories in order of increasing priority:
// ${XDG_CONFIG_HOME:-~/.config}/primus/profiles when it exists, then the
// entries of PRIMUS_PROFILE_PATH (colon-separated, the first one wins, as in PATH).
std::vector<std::string> DefaultUserProfileDirs(const Environment& environment);

// A layer's file as found in one place.
struct LayerFile {
  std::string layer;  // "arch/gfx942"
  bool builtin = false;
  ProfileFile file;   // file.path is "profiles/arch/gfx942.env" or the user's absolute path
};

// The built-in file for `layer`, if one is shipped.
std::vector<LayerFile> LoadBuiltinLayer(const std::string& layer, Diagnostics& diagnostics);
// The user's files for `layer`, one per directory that has it, in `dirs` order.
std::vector<LayerFile> LoadUserLayer(const std::string& layer, const std::vector<std::string>& dirs,
                                     Diagnostics& diagnostics);

// Names usable with --profile: built-in ones and those in the user directories.
std::vector<std::string> AvailableNamedProfiles(const std::vector<std::string>& user_dirs);

}  // namespace primus::platform
