// One profile file: environment defaults in a shell-compatible KEY=VALUE
// format, each line allowed a trailing "# comment" (docs/profiles.md):
//
//   # A whole-line comment.
//   HSA_NO_SCRATCH_RECLAIM=1          # why, and where the value comes from
//   export NCCL_DEBUG=WARN            # "export " is accepted, so `source` works
//   NCCL_TELEMETRY_LOG_PATH="/tmp/a b"  # quotes keep spaces and '#'
//
// No variable expansion: a value is used exactly as written. A line that is
// not an assignment is skipped with a warning naming file and line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "platform/sysfs_files.h"

namespace primus::platform {

struct ProfileSetting {
  std::string name;
  std::string value;
  int line = 0;
  std::string comment;  // the trailing comment, without '#'
};

struct ProfileFile {
  std::string path;  // as shown in origins: "profiles/vendor/amd.env" or an absolute path
  std::vector<ProfileSetting> settings;
};

ProfileFile ParseProfile(std::string_view text, const std::string& path, Diagnostics& diagnostics);

// A valid environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool IsVariableName(std::string_view name);

}  // namespace primus::platform
