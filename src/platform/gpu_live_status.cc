#include "platform/gpu_live_status.h"

#include <dlfcn.h>

#include <cstring>
#include <string>

#include "platform/sysfs_files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

// A dlopen handle closed on destruction; `Symbol` looks a function up.
class SharedLibrary {
 public:
  explicit SharedLibrary(const std::string& path) : handle_(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) log::Debug("{} not loaded: {}", path, ::dlerror());
  }
  ~SharedLibrary() {
    if (handle_) ::dlclose(handle_);
  }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  bool loaded() const { return handle_ != nullptr; }
  template <typename Function>
  Function Symbol(const char* name) const {
    return handle_ ? reinterpret_cast<Function>(::dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_;
};

// ---- NVML (nvml.h; only the stable, long-lived entry points) ----
using NvmlDevice = void*;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlProcessInfo {  // nvmlProcessInfo_v2_t, used by the _v2 and _v3 process calls
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlErrorInsufficientSize = 7;
constexpr int kNvmlMemoryErrorUncorrected = 1;
constexpr int kNvmlMemoryErrorCorrected = 0;
constexpr int kNvmlVolatileEcc = 0;

void QueryNvml(const std::string& path, const HostInfo& host, std::vector<GpuLiveStatus>& statuses) {
  SharedLibrary nvml(path);
  auto init = nvml.Symbol<int (*)()>("nvmlInit_v2");
  auto shutdown = nvml.Symbol<int (*)()>("nvmlShutdown");
  auto by_bus_id = nvml.Symbol<int (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByPciBusId_v2");
  if (!init || !shutdown || !by_bus_id) return;
  if (int status = init(); status != kNvmlSuccess) {
    log::Debug("nvmlInit_v2 failed with {}", status);
    return;
  }
  auto memory = nvml.Symbol<int (*)(NvmlDevice, NvmlMemory*)>("nvmlDeviceGetMemoryInfo");
  auto utilization = nvml.Symbol<int (*)(NvmlDevice, NvmlUtilization*)>("nvmlDeviceGetUtilizationRates");
  auto ecc = nvml.Symbol<int (*)(NvmlDevice, int, int, unsigned long long*)>("nvmlDeviceGetTotalEccErrors");
  auto processes = nvml.Symbol<int (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*)>(
      "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!processes) {
    processes = nvml.Symbol<int (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*)>(
        "nvmlDeviceGetComputeRunningProcesses_v2");
  }
  for (size_t i = 0; i < host.gpus.size(); ++i) {
    const GpuInfo& gpu = host.gpus[i];
    NvmlDevice device = nullptr;
    if (gpu.vendor != "nvidia" || gpu.pci_bus_id.empty() || by_bus_id(gpu.pci_bus_id.c_str(), &device) != kNvmlSuccess) {
      continue;
    }
    GpuLiveStatus& status = statuses[i];
    status.sources.push_back("nvml");
    if (NvmlMemory info{}; memory && memory(device, &info) == kNvmlSuccess) {
      status.memory_used_bytes = static_cast<int64_t>(info.used);
      status.memory_total_bytes = static_cast<int64_t>(info.total);
    }
    if (NvmlUtilization rates{}; utilization && utilization(device, &rates) == kNvmlSuccess) {
      status.utilization_percent = static_cast<int>(rates.gpu);
    }
    unsigned long long count = 0;
    if (ecc && ecc(device, kNvmlMemoryErrorUncorrected, kNvmlVolatileEcc, &count) == kNvmlSuccess) {
      status.ecc_uncorrected = static_cast<int64_t>(count);
    }
    if (ecc && ecc(device, kNvmlMemoryErrorCorrected, kNvmlVolatileEcc, &count) == kNvmlSuccess) {
      status.ecc_corrected = static_cast<int64_t>(count);
    }
    if (processes) {
      std::vector<NvmlProcessInfo> infos(64);
      unsigned int found = static_cast<unsigned int>(infos.size());
      int result = processes(device, &found, infos.data());
      if (result == kNvmlErrorInsufficientSize) {
        infos.resize(found);
        result = processes(device, &found, infos.data());
      }
      if (result == kNvmlSuccess) {
        for (unsigned int p = 0; p < found && p < infos.size(); ++p) {
          status.processes.push_back({static_cast<int>(infos[p].pid), static_cast<int64_t>(infos[p].used_gpu_memory)});
        }
      }
    }
  }
  shutdown();
}

// ---- amd-smi (amdsmi.h). Structures have grown between releases, so each
// call gets a zeroed buffer larger than any version's struct and only the
// leading fields, stable since ROCm 6.0, are read. ----
constexpr uint64_t kAmdSmiInitAmdGpus = 1 << 1;
constexpr int kAmdSmiSuccess = 0;
constexpr int kAmdSmiMemoryTypeVram = 0;

void QueryAmdSmi(const std::string& path, const HostInfo& host, std::vector<GpuLiveStatus>& statuses) {
  SharedLibrary amdsmi(path);
  auto init = amdsmi.Symbol<int (*)(uint64_t)>("amdsmi_init");
  auto shutdown = amdsmi.Symbol<int (*)()>("amdsmi_shut_down");
  auto by_bdf = amdsmi.Symbol<int (*)(uint64_t, void**)>("amdsmi_get_processor_handle_from_bdf");
  if (!init || !shutdown || !by_bdf) return;
  if (int status = init(kAmdSmiInitAmdGpus); status != kAmdSmiSuccess) {
    log::Debug("amdsmi_init failed with {}", status);
    return;
  }
  auto activity = amdsmi.Symbol<int (*)(void*, void*)>("amdsmi_get_gpu_activity");
  auto ecc = amdsmi.Symbol<int (*)(void*, void*)>("amdsmi_get_gpu_total_ecc_count");
  auto memory_usage = amdsmi.Symbol<int (*)(void*, int, uint64_t*)>("amdsmi_get_gpu_memory_usage");
  auto memory_total = amdsmi.Symbol<int (*)(void*, int, uint64_t*)>("amdsmi_get_gpu_memory_total");
  for (size_t i = 0; i < host.gpus.size(); ++i) {
    const GpuInfo& gpu = host.gpus[i];
    std::vector<std::string> parts = Split(gpu.pci_bus_id, ':');  // dddd:bb:dd.f
    if (gpu.vendor != "amd" || parts.size() != 3) continue;
    std::vector<std::string> device_function = Split(parts[2], '.');
    uint64_t domain = ParseUnsigned(parts[0], 16).value_or(0), bus = ParseUnsigned(parts[1], 16).value_or(0);
    uint64_t device = ParseUnsigned(device_function[0], 16).value_or(0);
    uint64_t function = device_function.size() > 1 ? ParseUnsigned(device_function[1], 16).value_or(0) : 0;
    // amdsmi_bdf_t: function:3, device:5, bus:8, domain:48, from the low bit up.
    uint64_t bdf = (domain << 16) | (bus << 8) | (device << 3) | function;
    void* handle = nullptr;
    if (by_bdf(bdf, &handle) != kAmdSmiSuccess || !handle) continue;
    GpuLiveStatus& status = statuses[i];
    status.sources.push_back("amd-smi");
    alignas(8) unsigned char buffer[512];
    std::memset(buffer, 0, sizeof(buffer));
    if (activity && activity(handle, buffer) == kAmdSmiSuccess) {
      uint32_t gfx_activity = 0;  // amdsmi_engine_usage_t::gfx_activity
      std::memcpy(&gfx_activity, buffer, sizeof(gfx_activity));
      status.utilization_percent = static_cast<int>(gfx_activity);
    }
    std::memset(buffer, 0, sizeof(buffer));
    if (ecc && ecc(handle, buffer) == kAmdSmiSuccess) {
      uint64_t counts[2] = {};  // amdsmi_error_count_t: correctable, uncorrectable
      std::memcpy(counts, buffer, sizeof(counts));
      status.ecc_corrected = static_cast<int64_t>(counts[0]);
      status.ecc_uncorrected = static_cast<int64_t>(counts[1]);
    }
    uint64_t bytes = 0;
    if (memory_usage && memory_usage(handle, kAmdSmiMemoryTypeVram, &bytes) == kAmdSmiSuccess) {
      status.memory_used_bytes = static_cast<int64_t>(bytes);
    }
    if (memory_total && memory_total(handle, kAmdSmiMemoryTypeVram, &bytes) == kAmdSmiSuccess) {
      status.memory_total_bytes = static_cast<int64_t>(bytes);
    }
  }
  shutdown();
}

// ---- KFD sysfs: VRAM in use per GPU and per process, no library needed. ----
void QueryKfd(const Roots& roots, const HostInfo& host, std::vector<GpuLiveStatus>& statuses) {
  std::string processes_dir = roots.Sys("class/kfd/kfd/proc");
  std::vector<std::string> pids = ListDirectory(processes_dir);
  for (size_t i = 0; i < host.gpus.size(); ++i) {
    const GpuInfo& gpu = host.gpus[i];
    if (gpu.vendor != "amd" || gpu.kfd_node < 0) continue;
    GpuLiveStatus& status = statuses[i];
    std::string used = roots.Sys("class/kfd/kfd/topology/nodes/" + std::to_string(gpu.kfd_node) +
                                 "/mem_banks/0/used_memory");
    auto used_bytes = ParseUnsigned(ReadAttribute(used).value_or(""));
    if (used_bytes) {
      status.memory_used_bytes = static_cast<int64_t>(*used_bytes);
      status.memory_total_bytes = gpu.memory_bytes > 0 ? gpu.memory_bytes : -1;
    }
    for (const std::string& pid : pids) {
      auto vram = ReadAttribute(processes_dir + "/" + pid + "/vram_" + std::to_string(gpu.gpu_id));
      auto pid_number = ParseUnsigned(pid);
      if (!vram || !pid_number) continue;
      status.processes.push_back({static_cast<int>(*pid_number), static_cast<int64_t>(ParseUnsigned(*vram).value_or(0))});
    }
    if (used_bytes || !status.processes.empty()) status.sources.push_back("kfd");
  }
}

}  // namespace

std::vector<GpuLiveStatus> QueryLiveStatus(const HostInfo& host, const Roots& roots,
                                                 const VendorLibraries& libraries) {
  std::vector<GpuLiveStatus> statuses(host.gpus.size());
  bool amd = false, nvidia = false;
  for (size_t i = 0; i < host.gpus.size(); ++i) {
    statuses[i].pci_bus_id = host.gpus[i].pci_bus_id;
    amd = amd || host.gpus[i].vendor == "amd";
    nvidia = nvidia || host.gpus[i].vendor == "nvidia";
  }
  if (amd) {
    QueryKfd(roots, host, statuses);
    QueryAmdSmi(libraries.amd_smi, host, statuses);  // amd-smi's numbers replace KFD's where it answers
  }
  if (nvidia) QueryNvml(libraries.nvml, host, statuses);
  return statuses;
}

}  // namespace primus::platform
