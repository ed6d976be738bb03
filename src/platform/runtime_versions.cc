#include "platform/runtime_versions.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "platform/sysfs_files.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

std::string EnvOr(const std::map<std::string, std::string>& env, std::initializer_list<const char*> names,
                  const std::string& fallback) {
  for (const char* name : names) {
    auto it = env.find(name);
    if (it != env.end() && !it->second.empty()) return it->second;
  }
  return fallback;
}

// The first line of a small text file, trimmed; "" when it cannot be read.
std::string FirstLine(const std::string& path) {
  auto text = ReadRegularFile(path, 64 << 10);
  if (!text.ok()) return "";
  return std::string(Trim(Split(*text, '\n').front()));
}

bool IsVersion(std::string_view text) {
  if (text.empty() || text.size() > 40 || text.front() == '.' || text.back() == '.') return false;
  for (char c : text) {
    if (!(c >= '0' && c <= '9') && c != '.') return false;
  }
  return true;
}

// The longest numbered suffix of `<name>.<version>` among the directories' files.
std::string LibraryVersion(const std::vector<std::string>& dirs, const std::string& name) {
  std::string best;
  for (const std::string& dir : dirs) {
    for (const std::string& file : ListDirectory(dir)) {
      if (!file.starts_with(name + ".")) continue;
      std::string_view version = std::string_view(file).substr(name.size() + 1);
      if (!IsVersion(version)) continue;
      auto dots = [](std::string_view v) { return std::count(v.begin(), v.end(), '.'); };
      if (best.empty() || dots(version) > dots(best) || (dots(version) == dots(best) && version > best)) {
        best = std::string(version);
      }
    }
  }
  return best;
}

std::string CudaVersion(const std::string& cuda) {
  if (auto text = ReadRegularFile(cuda + "/version.json", 1 << 20); text.ok()) {
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (json.is_object() && json.contains("cuda") && json["cuda"].is_object() && json["cuda"].contains("version") &&
        json["cuda"]["version"].is_string()) {
      std::string version = json["cuda"]["version"].get<std::string>();
      if (IsVersion(version)) return version;
    }
  }
  std::string line = FirstLine(cuda + "/version.txt");  // "CUDA Version 11.8.89"
  size_t at = line.rfind(' ');
  std::string version = at == std::string::npos ? "" : line.substr(at + 1);
  return IsVersion(version) ? version : "";
}

}  // namespace

RuntimeVersions ReadRuntimeVersions(const std::string& root, const std::map<std::string, std::string>& env) {
  std::string rocm = root + EnvOr(env, {"ROCM_PATH"}, "/opt/rocm");
  std::string cuda = root + EnvOr(env, {"CUDA_HOME", "CUDA_PATH"}, "/usr/local/cuda");
  std::vector<std::string> dirs = {rocm + "/lib", cuda + "/lib64"};
  for (const std::string& dir : Split(EnvOr(env, {"LD_LIBRARY_PATH"}, ""), ':')) {
    if (!dir.empty() && dir.front() == '/') dirs.push_back(root + dir);
  }
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"}) {
    dirs.push_back(root + dir);
  }
  RuntimeVersions versions;
  versions.rocm = FirstLine(rocm + "/.info/version");
  if (versions.rocm.size() > 64) versions.rocm.clear();
  versions.hip = LibraryVersion(dirs, "libamdhip64.so");
  versions.rccl = LibraryVersion(dirs, "librccl.so");
  versions.cuda = CudaVersion(cuda);
  versions.nccl = LibraryVersion(dirs, "libnccl.so");
  return versions;
}

}  // namespace primus::platform
