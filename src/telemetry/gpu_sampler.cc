#include "telemetry/gpu_sampler.h"

#include <dlfcn.h>

#include <cmath>

#include "platform/sysfs_files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::telemetry {
namespace {

std::optional<int64_t> ReadNumber(const std::string& path) {
  std::optional<std::string> text = platform::ReadAttribute(path);
  if (!text) return std::nullopt;
  std::optional<uint64_t> value = platform::ParseUnsigned(*text);
  if (!value) return std::nullopt;
  return static_cast<int64_t>(*value);
}

}  // namespace

// NVML's few entry points (nvml.h); constants as there. Outside the anonymous
// namespace: GpuSampler::Nvml's members have these types.
using NvmlDevice = void*;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM

struct GpuSampler::Gpu {
  platform::GpuInfo info;
  std::string device_dir;  // AMD: /sys/bus/pci/devices/<bus id>
  std::string hwmon_dir;   // AMD: its hwmon/hwmonN, "" when none
  void* nvml_device = nullptr;
};

class GpuSampler::Nvml {
 public:
  explicit Nvml(const std::string& path) : handle_(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) {
      log::Debug("telemetry: {} not loaded: {}", path, ::dlerror());
      return;
    }
    auto init = Symbol<int (*)()>("nvmlInit_v2");
    shutdown_ = Symbol<int (*)()>("nvmlShutdown");
    by_bus_id_ = Symbol<int (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByPciBusId_v2");
    memory_ = Symbol<int (*)(NvmlDevice, NvmlMemory*)>("nvmlDeviceGetMemoryInfo");
    utilization_ = Symbol<int (*)(NvmlDevice, NvmlUtilization*)>("nvmlDeviceGetUtilizationRates");
    power_ = Symbol<int (*)(NvmlDevice, unsigned int*)>("nvmlDeviceGetPowerUsage");
    temperature_ = Symbol<int (*)(NvmlDevice, int, unsigned int*)>("nvmlDeviceGetTemperature");
    clock_ = Symbol<int (*)(NvmlDevice, int, unsigned int*)>("nvmlDeviceGetClockInfo");
    if (!init || !shutdown_ || !by_bus_id_ || init() != kNvmlSuccess) {
      log::Debug("telemetry: NVML at {} could not be initialised", path);
      shutdown_ = nullptr;
      return;
    }
    ready_ = true;
  }
  ~Nvml() {
    if (ready_ && shutdown_) shutdown_();
    if (handle_) ::dlclose(handle_);
  }
  bool ready() const { return ready_; }

  void* Device(const std::string& bus_id) {
    NvmlDevice device = nullptr;
    if (!ready_ || by_bus_id_(bus_id.c_str(), &device) != kNvmlSuccess) return nullptr;
    return device;
  }

  void Fill(void* device, GpuStats& stats) {
    if (NvmlMemory info{}; memory_ && memory_(device, &info) == kNvmlSuccess) {
      stats.memory_used_bytes = static_cast<int64_t>(info.used);
      stats.memory_total_bytes = static_cast<int64_t>(info.total);
    }
    if (NvmlUtilization rates{}; utilization_ && utilization_(device, &rates) == kNvmlSuccess) {
      stats.utilization_percent = static_cast<int>(rates.gpu);
    }
    unsigned int value = 0;
    if (power_ && power_(device, &value) == kNvmlSuccess) stats.power_watts = value / 1000.0;  // mW
    if (temperature_ && temperature_(device, kNvmlTemperatureGpu, &value) == kNvmlSuccess) {
      stats.temperature_c = static_cast<int>(value);
    }
    if (clock_ && clock_(device, kNvmlClockSm, &value) == kNvmlSuccess) stats.clock_mhz = static_cast<int>(value);
  }

 private:
  template <typename Function>
  Function Symbol(const char* name) const {
    return reinterpret_cast<Function>(::dlsym(handle_, name));
  }

  void* handle_;
  bool ready_ = false;
  int (*shutdown_)() = nullptr;
  int (*by_bus_id_)(const char*, NvmlDevice*) = nullptr;
  int (*memory_)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*utilization_)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*power_)(NvmlDevice, unsigned int*) = nullptr;
  int (*temperature_)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*clock_)(NvmlDevice, int, unsigned int*) = nullptr;
};

std::optional<int> CurrentDpmLevelMhz(std::string_view pp_dpm_sclk) {
  for (const std::string& raw : Split(pp_dpm_sclk, '\n')) {
    std::string_view line = raw;
    if (line.find('*') == std::string_view::npos) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    size_t digits = line.find_first_of("0123456789", colon);
    if (digits == std::string_view::npos) return std::nullopt;
    size_t stop = line.find_first_not_of("0123456789", digits);
    std::string_view number = line.substr(digits, stop - digits);
    std::optional<uint64_t> mhz = platform::ParseUnsigned(number);
    if (!mhz) return std::nullopt;
    return static_cast<int>(*mhz);
  }
  return std::nullopt;
}

GpuSampler::GpuSampler(const std::vector<platform::GpuInfo>& gpus, platform::Roots roots, std::string nvml_library) {
  for (const platform::GpuInfo& info : gpus) {
    Gpu gpu;
    gpu.info = info;
    if (info.vendor == "amd" && !info.pci_bus_id.empty()) {
      gpu.device_dir = roots.Sys("bus/pci/devices/" + info.pci_bus_id);
      for (const std::string& name : platform::ListDirectory(gpu.device_dir + "/hwmon")) {
        if (name.rfind("hwmon", 0) == 0) {
          gpu.hwmon_dir = gpu.device_dir + "/hwmon/" + name;
          break;
        }
      }
    }
    if (info.vendor == "nvidia" && !info.pci_bus_id.empty()) {
      if (!nvml_) nvml_ = std::make_unique<Nvml>(nvml_library);
      gpu.nvml_device = nvml_->Device(info.pci_bus_id);
    }
    gpus_.push_back(std::move(gpu));
  }
}

GpuSampler::~GpuSampler() = default;

bool GpuSampler::nvml_loaded() const { return nvml_ && nvml_->ready(); }

std::vector<GpuStats> GpuSampler::Sample() {
  std::vector<GpuStats> result;
  result.reserve(gpus_.size());
  for (const Gpu& gpu : gpus_) {
    GpuStats stats;
    stats.index = gpu.info.index;
    stats.bus_id = gpu.info.pci_bus_id;
    stats.vendor = gpu.info.vendor;
    if (!gpu.device_dir.empty()) {
      const std::string& dir = gpu.device_dir;
      if (auto busy = ReadNumber(dir + "/gpu_busy_percent")) stats.utilization_percent = static_cast<int>(*busy);
      stats.memory_used_bytes = ReadNumber(dir + "/mem_info_vram_used");
      stats.memory_total_bytes = ReadNumber(dir + "/mem_info_vram_total");
      if (!gpu.hwmon_dir.empty()) {
        std::optional<int64_t> microwatts = ReadNumber(gpu.hwmon_dir + "/power1_average");
        if (!microwatts) microwatts = ReadNumber(gpu.hwmon_dir + "/power1_input");
        if (microwatts) stats.power_watts = static_cast<double>(*microwatts) / 1e6;
        if (auto millidegrees = ReadNumber(gpu.hwmon_dir + "/temp1_input")) {
          stats.temperature_c = static_cast<int>(std::lround(static_cast<double>(*millidegrees) / 1000.0));
        }
        if (auto hertz = ReadNumber(gpu.hwmon_dir + "/freq1_input")) {
          stats.clock_mhz = static_cast<int>(std::lround(static_cast<double>(*hertz) / 1e6));
        }
      }
      if (!stats.clock_mhz) {
        if (auto levels = platform::ReadAttribute(dir + "/pp_dpm_sclk")) stats.clock_mhz = CurrentDpmLevelMhz(*levels);
      }
    }
    if (gpu.nvml_device != nullptr && nvml_) nvml_->Fill(gpu.nvml_device, stats);
    result.push_back(std::move(stats));
  }
  return result;
}

}  // namespace primus::telemetry
