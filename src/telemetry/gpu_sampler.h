// The GPUs' share of a node sample: utilization, memory, power, temperature
// and clock of each GPU platform::DetectHost found (detected once per launch,
// not per sample).
//   AMD: the amdgpu sysfs files of the card's PCI device (gpu_busy_percent,
//        mem_info_vram_used/total, hwmon power1_average or power1_input in
//        µW, temp1_input in m°C, freq1_input in Hz or the current level of
//        pp_dpm_sclk); the hwmon directory is found once.
//   NVIDIA: NVML (libnvidia-ml.so.1), opened with dlopen and initialised once
//        when the first NVIDIA GPU is seen, kept open for the launch and shut
//        down at the end. A host without NVIDIA GPUs never loads it.
// A value no source gives is left unknown.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "telemetry/node_sample.h"

namespace primus::telemetry {

class GpuSampler {
 public:
  // `nvml_library`: where to dlopen NVML from (tests pass the fake).
  GpuSampler(const std::vector<platform::GpuInfo>& gpus, platform::Roots roots,
             std::string nvml_library = "libnvidia-ml.so.1");
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  std::vector<GpuStats> Sample();
  // Whether NVML was loaded and initialised (false on hosts without NVIDIA GPUs).
  bool nvml_loaded() const;

 private:
  struct Gpu;
  class Nvml;
  std::vector<Gpu> gpus_;
  std::unique_ptr<Nvml> nvml_;
};

// The clock of the level pp_dpm_sclk marks current ("1: 2100Mhz *"), in MHz.
std::optional<int> CurrentDpmLevelMhz(std::string_view pp_dpm_sclk);

}  // namespace primus::telemetry
