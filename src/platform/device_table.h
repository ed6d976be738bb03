// The accelerators primus-cli knows by PCI id: vendor, model (the name the
// profile chain uses), architecture, and the datasheet numbers that the
// benchmark and preflight tasks compare measurements against. A device that
// is not in the table is still detected; it just gets no model (its
// architecture, from KFD or the PCI id range, picks its profile).
// Source of every number: shared/reference/hardware.md (dense, no sparsity).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace primus::platform {

constexpr uint16_t kAmdVendorId = 0x1002;
constexpr uint16_t kNvidiaVendorId = 0x10de;

struct KnownDevice {
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  std::string_view vendor;   // "amd" | "nvidia"
  std::string_view model;    // profile key: "MI300X", "H100"
  std::string_view product;  // what to show: "Instinct MI300X", "H100 SXM5 80GB"
  std::string_view arch;     // "gfx942", "sm90"
  // Peak dense throughput in TFLOPS; 0 where hardware.md gives no number.
  double bf16_tflops = 0;    // also fp16
  double fp8_tflops = 0;
  double fp32_tflops = 0;
  double memory_gib = 0;     // as marketed (GB on the datasheet, 2^30 bytes here)
  double hbm_tb_per_s = 0;
};

const std::vector<KnownDevice>& KnownDevices();
const KnownDevice* FindKnownDevice(uint16_t vendor_id, uint16_t device_id);
// The first entry for a model name ("MI300X"), case-insensitive.
const KnownDevice* FindKnownModel(std::string_view model);

// "gfx942" from KFD's gfx_target_version (major*10000 + minor*100 + stepping);
// minor and stepping print in hex as the LLVM target names do ("gfx90a").
std::string GfxTargetName(uint64_t gfx_target_version);

// NVIDIA's architecture from the device-id range, for GPUs newer than the
// table: 0x20xx A100 (sm80), 0x23xx Hopper (sm90), 0x29xx Blackwell (sm100).
// Empty when the id is outside those ranges.
std::string NvidiaArchFromDeviceId(uint16_t device_id);

}  // namespace primus::platform
