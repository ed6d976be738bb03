#include "runtime/container_mounts.h"

#include "util/files.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

// Directories of the image that a mount of the working directory would
// hide: running from one of them, the working directory is not mounted.
bool IsSystemDirectory(const std::string& path) {
  if (path == "/") return true;
  for (const char* dir : {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
                          "/sbin", "/sys", "/usr", "/opt/primus"}) {
    if (IsUnder(path, dir)) return true;
  }
  return false;
}

// True when `path` is already visible inside at the same path.
bool Covered(const std::string& path, const std::vector<Mount>& mounts) {
  for (const Mount& mount : mounts) {
    if (!mount.raw.empty() || mount.host != mount.container) continue;
    if (IsUnder(path, mount.host)) return true;
  }
  return false;
}

bool TargetTaken(const std::string& target, const std::vector<Mount>& mounts) {
  for (const Mount& mount : mounts) {
    if (mount.container == target) return true;
  }
  return false;
}

}  // namespace

bool Mount::read_only() const {
  for (const std::string& option : Split(options, ',')) {
    if (option == "ro" || option == "readonly") return true;
  }
  return false;
}

std::string Mount::Spec() const {
  if (!raw.empty()) return raw;
  return host + ":" + container + (options.empty() ? "" : ":" + options);
}

std::string AbsolutePath(const std::string& path, const std::string& cwd) {
  std::string joined = path.starts_with("/") ? path : cwd + "/" + path;
  std::vector<std::string> parts;
  for (const std::string& part : Split(joined, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  return "/" + Join(parts, "/");
}

bool IsUnder(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

Result<Mount> ParseMount(const std::string& text, const std::string& cwd, const std::string& where) {
  Mount mount;
  if (text.find("type=") != std::string::npos) {
    mount.raw = text;
    return mount;
  }
  std::vector<std::string> parts = Split(text, ':');
  if (text.empty() || parts.size() > 3 || parts[0].empty() || (parts.size() >= 2 && parts[1].empty())) {
    return UsageError(where + ": '" + text + "' is not HOST:CONTAINER[:ro] or PATH",
                      "write e.g. --mount /data:/data:ro (HOST and CONTAINER absolute paths)");
  }
  mount.host = parts[0];
  if (mount.host.starts_with("~")) mount.host = HomeDir() + mount.host.substr(1);
  if (mount.host.starts_with(".") || mount.host.starts_with("/")) mount.host = AbsolutePath(mount.host, cwd);
  mount.container = parts.size() >= 2 ? parts[1] : mount.host;
  if (!mount.container.starts_with("/")) {
    return UsageError(where + ": the container path in '" + text + "' must be absolute",
                      "write e.g. --mount " + mount.host + ":/data");
  }
  if (parts.size() == 3) mount.options = parts[2];
  return mount;
}

MountPlan PlanMounts(const MountRequest& inputs) {
  MountPlan plan;
  plan.mounts.push_back({inputs.binary, kInnerBinary, "ro", ""});
  if (!inputs.hooks_dir.empty()) plan.mounts.push_back({inputs.hooks_dir, kInnerHooks, "ro", ""});
  std::string cwd = AbsolutePath(inputs.cwd, "/");
  if (IsSystemDirectory(cwd)) {
    plan.warnings.push_back("the working directory " + cwd +
                            " is a system directory of the image, so it is not mounted; relative paths will not "
                            "reach the host (cd to a project directory first)");
  } else {
    plan.mounts.push_back({cwd, cwd, "", ""});
    plan.workdir = cwd;
  }
  for (const Mount& mount : inputs.user) {
    if (!mount.container.empty() && TargetTaken(mount.container, plan.mounts)) {
      // The user's mount replaces ours at the same place.
      std::erase_if(plan.mounts, [&](const Mount& m) { return m.container == mount.container; });
      if (mount.container == plan.workdir && mount.host != cwd) plan.workdir = mount.container;
    }
    plan.mounts.push_back(mount);
  }
  for (const std::string& path : inputs.read_only) {
    std::string absolute = AbsolutePath(path, cwd);
    if (Covered(absolute, plan.mounts) || TargetTaken(absolute, plan.mounts) || !PathExists(absolute)) continue;
    plan.mounts.push_back({absolute, absolute, "ro", ""});
  }
  for (const std::string& path : inputs.writable) {
    std::string absolute = AbsolutePath(path, cwd);
    if (Covered(absolute, plan.mounts) || TargetTaken(absolute, plan.mounts)) continue;
    if (!PathExists(absolute)) plan.create.push_back(absolute);
    plan.mounts.push_back({absolute, absolute, "", ""});
  }
  return plan;
}

}  // namespace primus::runtime
