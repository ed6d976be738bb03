// The profiles shipped in profiles/, compiled into the binary (the binary is
// bind-mounted into containers that do not have the source tree). The data
// is generated at build time from the files by embed_profiles.cmake.
#pragma once

#include <string_view>
#include <vector>

namespace primus::platform {

struct BuiltinProfileFile {
  std::string_view path;  // "profiles/arch/gfx942.env"
  std::string_view text;
};

const std::vector<BuiltinProfileFile>& BuiltinProfileFiles();

// The file at `path` ("profiles/model/MI300X.env"), or nullptr.
const BuiltinProfileFile* FindBuiltinProfile(std::string_view path);

}  // namespace primus::platform
