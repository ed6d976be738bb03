#include "runtime/container_devices.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "util/files.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

void AddGroupOf(const std::string& path, std::vector<unsigned>* groups) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0 || info.st_gid == 0) return;
  if (std::find(groups->begin(), groups->end(), info.st_gid) == groups->end()) groups->push_back(info.st_gid);
}

bool HasNvidiaCdiSpec() {
  for (const char* dir : {"/etc/cdi", "/var/run/cdi"}) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      if (entry.path().filename().string().find("nvidia") != std::string::npos) return true;
    }
  }
  return false;
}

}  // namespace

GpuDevices FindGpuDevices(const platform::HostInfo& host, const std::string& dev) {
  GpuDevices devices;
  if (!host.gpus.empty()) devices.vendor = host.gpus.front().vendor;
  else if (PathExists(dev + "/kfd")) devices.vendor = "amd";
  else if (PathExists(dev + "/nvidiactl")) devices.vendor = "nvidia";

  for (const char* name : {"kfd", "dri", "infiniband"}) {
    if (PathExists(dev + "/" + name)) devices.present.push_back(std::string("/dev/") + name);
  }
  if (devices.vendor == "amd") {
    AddGroupOf(dev + "/kfd", &devices.group_ids);
    std::error_code error;
    std::vector<std::string> dri;
    for (const auto& entry : std::filesystem::directory_iterator(dev + "/dri", error)) {
      dri.push_back(entry.path().string());
    }
    std::sort(dri.begin(), dri.end());
    for (const std::string& path : dri) AddGroupOf(path, &devices.group_ids);
  }
  if (devices.vendor == "nvidia") devices.nvidia_cdi = HasNvidiaCdiSpec();
  return devices;
}

}  // namespace primus::runtime
