#include "platform/roots.h"

#include <cstdlib>

#include "util/files.h"

namespace primus::platform {
namespace {

std::string EnvironmentOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

}  // namespace

Roots Roots::FromEnvironment() {
  Roots roots;
  roots.sysfs = EnvironmentOr("PRIMUS_SYSFS_ROOT", "/sys");
  roots.procfs = EnvironmentOr("PRIMUS_PROCFS_ROOT", "/proc");
  roots.etc = EnvironmentOr("PRIMUS_ETC_ROOT", "/etc");
  return roots;
}

Roots Roots::UnderDirectory(const std::string& dir) {
  Roots roots;
  roots.sysfs = JoinPath(dir, "sys");
  roots.procfs = JoinPath(dir, "proc");
  roots.etc = JoinPath(dir, "etc");
  return roots;
}

std::string Roots::Sys(std::string_view relative) const { return JoinPath(sysfs, std::string(relative)); }
std::string Roots::Proc(std::string_view relative) const { return JoinPath(procfs, std::string(relative)); }
std::string Roots::Etc(std::string_view relative) const { return JoinPath(etc, std::string(relative)); }

}  // namespace primus::platform
