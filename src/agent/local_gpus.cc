#include "agent/local_gpus.h"

#include <dirent.h>
#include <sched.h>

#include <cstdlib>

#include "util/files.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) return names;
  while (dirent* entry = ::readdir(handle)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  ::closedir(handle);
  return names;
}

}  // namespace

int CountGpuDevices(const std::string& root) {
  int nvidia = static_cast<int>(Entries(root + "/proc/driver/nvidia/gpus").size());
  if (nvidia > 0) return nvidia;
  int amd = 0;
  std::string nodes = root + "/sys/class/kfd/kfd/topology/nodes";
  for (const std::string& node : Entries(nodes)) {
    auto gpu_id = ReadFile(nodes + "/" + node + "/gpu_id");
    if (gpu_id.ok() && ParseInt(Trim(*gpu_id)).value_or(0) != 0) ++amd;
  }
  return amd;
}

int CountVisibleGpus() {
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    int count = 0;
    for (const std::string& item : Split(value, ',')) {
      if (!Trim(item).empty() && Trim(item) != "-1") ++count;
    }
    return count;
  }
  return CountGpuDevices();
}

Result<int> ResolveNprocPerNode(std::string_view text) {
  std::string value = ToLower(Trim(text));
  if (value == "auto" || value == "gpu") return std::max(1, CountVisibleGpus());
  if (value == "cpu") {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return 1;
  }
  std::optional<int64_t> number = ParseInt(value);
  if (!number || *number < 1 || *number > 4096) {
    return UsageError("nproc_per_node '" + std::string(text) + "' is not a number of workers",
                      "give a number (1 or more), auto (one per GPU) or cpu");
  }
  return static_cast<int>(*number);
}

}  // namespace primus::agent
