#include "platform/visible_devices.h"

#include <algorithm>

#include "util/log.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

// Applies one visibility list to `candidates` (indices into host.gpus).
// Entries are positions in `candidates` or GPU UUIDs (a unique prefix is
// enough, as CUDA allows). MIG instance UUIDs cannot be matched from sysfs
// and end the list like any other unknown entry.
std::vector<int> ApplyVisibilityList(const HostInfo& host, const std::vector<int>& candidates,
                                     const std::string& variable, const std::string& value) {
  std::vector<int> selected;
  if (Trim(value).empty()) return selected;
  for (const std::string& raw : Split(value, ',')) {
    std::string entry(Trim(raw));
    int chosen = -1;
    if (auto index = ParseInt(entry); index && *index >= 0 && *index < static_cast<int64_t>(candidates.size())) {
      chosen = candidates[static_cast<size_t>(*index)];
    } else if (entry.rfind("GPU-", 0) == 0) {
      std::string wanted = ToLower(entry);
      int matches = 0;
      for (int candidate : candidates) {
        if (ToLower(host.gpus[static_cast<size_t>(candidate)].uuid).rfind(wanted, 0) == 0) {
          chosen = candidate;
          ++matches;
        }
      }
      if (matches > 1) chosen = -1;  // an ambiguous prefix names no GPU
    }
    if (chosen < 0) {
      log::Warn("{}={}: '{}' names no GPU on this host; the GPUs listed after it are not visible either",
                variable, value, entry);
      break;
    }
    if (std::find(selected.begin(), selected.end(), chosen) != selected.end()) {
      log::Warn("{}={}: '{}' is listed twice; counted once", variable, value, entry);
      continue;
    }
    selected.push_back(chosen);
  }
  return selected;
}

}  // namespace

std::vector<std::string> AppliedVisibilityVariables(const HostInfo& host, const Environment& environment) {
  std::vector<std::string> applied;
  if (host.gpus.empty()) return applied;
  auto set = [&](const char* name) { return Lookup(environment, name).has_value(); };
  if (host.gpus.front().vendor == "amd") {
    if (set("ROCR_VISIBLE_DEVICES")) applied.push_back("ROCR_VISIBLE_DEVICES");
    if (set("HIP_VISIBLE_DEVICES")) {
      applied.push_back("HIP_VISIBLE_DEVICES");
    } else if (set("CUDA_VISIBLE_DEVICES")) {
      applied.push_back("CUDA_VISIBLE_DEVICES");
    }
  } else if (set("CUDA_VISIBLE_DEVICES")) {
    applied.push_back("CUDA_VISIBLE_DEVICES");
  }
  return applied;
}

std::vector<int> VisibleGpuIndices(const HostInfo& host, const Environment& environment) {
  std::vector<int> visible;
  if (host.gpus.empty()) return visible;
  const std::string vendor = host.gpus.front().vendor;
  for (const GpuInfo& gpu : host.gpus) {
    if (gpu.vendor == vendor) visible.push_back(gpu.index);
  }
  for (const std::string& name : AppliedVisibilityVariables(host, environment)) {
    visible = ApplyVisibilityList(host, visible, name, *Lookup(environment, name));
  }
  return visible;
}

int CountVisibleGpus(const HostInfo& host, const Environment& environment) {
  return static_cast<int>(VisibleGpuIndices(host, environment).size());
}

std::string GpuOfLocalRank(const HostInfo& host, const Environment& environment, int local_rank) {
  std::vector<int> visible = VisibleGpuIndices(host, environment);
  if (local_rank < 0 || static_cast<size_t>(local_rank) >= visible.size()) return "";
  const GpuInfo& gpu = host.gpus[static_cast<size_t>(visible[static_cast<size_t>(local_rank)])];
  return "GPU " + std::to_string(gpu.index) + (gpu.pci_bus_id.empty() ? "" : " (" + gpu.pci_bus_id + ")");
}

int AutoProcessesPerNode(const HostInfo& host, const Environment& environment) {
  return std::max(1, CountVisibleGpus(host, environment));
}

}  // namespace primus::platform
