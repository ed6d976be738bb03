#include "platform/builtin_profiles.h"

namespace primus::platform {

const BuiltinProfileFile* FindBuiltinProfile(std::string_view path) {
  for (const BuiltinProfileFile& file : BuiltinProfileFiles()) {
    if (file.path == path) return &file;
  }
  return nullptr;
}

}  // namespace primus::platform
