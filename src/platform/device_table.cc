#include "platform/device_table.h"

#include "util/strings.h"

namespace primus::platform {

const std::vector<KnownDevice>& KnownDevices() {
  // Columns: vendor id, device id, vendor, model, product, arch,
  //          bf16/fp16, fp8, fp32 TFLOPS, memory GiB, HBM TB/s.
  static const std::vector<KnownDevice> devices = {
      // AMD Instinct, CDNA1-CDNA4.
      {0x1002, 0x738c, "amd", "MI100", "Instinct MI100", "gfx908"},
      {0x1002, 0x738e, "amd", "MI100", "Instinct MI100", "gfx908"},
      {0x1002, 0x7408, "amd", "MI250X", "Instinct MI250X", "gfx90a", 383, 0, 47.9, 128, 3.2},
      // 740c is shared by MI250X and MI250; the numbers are the MI250X's.
      {0x1002, 0x740c, "amd", "MI250X", "Instinct MI250X/MI250", "gfx90a", 383, 0, 47.9, 128, 3.2},
      {0x1002, 0x740f, "amd", "MI210", "Instinct MI210", "gfx90a"},
      {0x1002, 0x74a0, "amd", "MI300A", "Instinct MI300A", "gfx942"},
      {0x1002, 0x74a1, "amd", "MI300X", "Instinct MI300X", "gfx942", 1307.4, 2614.9, 163.4, 192, 5.3},
      {0x1002, 0x74a2, "amd", "MI308X", "Instinct MI308X", "gfx942"},
      {0x1002, 0x74a5, "amd", "MI325X", "Instinct MI325X", "gfx942", 1307.4, 2614.9, 163.4, 256, 6.0},
      {0x1002, 0x74b5, "amd", "MI300X", "Instinct MI300X VF", "gfx942", 1307.4, 2614.9, 163.4, 192, 5.3},
      // MI350X peaks are approximate in hardware.md ("~2307", "~4614").
      {0x1002, 0x75a0, "amd", "MI350X", "Instinct MI350X", "gfx950", 2307, 4614, 144.2, 288, 8.0},
      {0x1002, 0x75a3, "amd", "MI355X", "Instinct MI355X", "gfx950", 2516.6, 5033, 157.3, 288, 8.0},
      // Consumer and workstation RDNA4 (Navi 48); 1002:7551 and 32 GB per the
      // public PCI id list and vendor listings.
      {0x1002, 0x7550, "amd", "RX9070", "Radeon RX 9070 / 9070 XT / 9070 GRE", "gfx1201"},
      {0x1002, 0x7551, "amd", "R9700", "Radeon AI PRO R9700", "gfx1201", 0, 0, 0, 32, 0},
      // NVIDIA datacenter, Ampere to Blackwell.
      {0x10de, 0x20b0, "nvidia", "A100", "A100 SXM4 40GB", "sm80", 0, 0, 0, 40, 0},
      {0x10de, 0x20b2, "nvidia", "A100", "A100 SXM4 80GB", "sm80", 0, 0, 0, 80, 0},
      {0x10de, 0x2330, "nvidia", "H100", "H100 SXM5 80GB", "sm90", 989.4, 1978.9, 66.9, 80, 3.35},
      {0x10de, 0x2331, "nvidia", "H100", "H100 PCIe", "sm90", 756, 1513, 51, 80, 2.0},
      {0x10de, 0x2324, "nvidia", "H800", "H800", "sm90"},
      {0x10de, 0x2335, "nvidia", "H200", "H200 SXM 141GB", "sm90", 989.4, 1978.9, 67, 141, 4.8},
      {0x10de, 0x233b, "nvidia", "H200", "H200 NVL", "sm90", 0, 0, 0, 141, 0},
      {0x10de, 0x2329, "nvidia", "H20", "H20", "sm90"},
      {0x10de, 0x2342, "nvidia", "GH200", "GH200", "sm90"},
      {0x10de, 0x2348, "nvidia", "GH200", "GH200", "sm90"},
      // hardware.md gives ranges for B200 (FP32 75-80, HBM 7.7-8.0): the low end.
      {0x10de, 0x2901, "nvidia", "B200", "B200", "sm100", 2250, 4500, 75, 180, 7.7},
      {0x10de, 0x2941, "nvidia", "GB200", "GB200", "sm100"},
  };
  return devices;
}

const KnownDevice* FindKnownDevice(uint16_t vendor_id, uint16_t device_id) {
  for (const KnownDevice& device : KnownDevices()) {
    if (device.vendor_id == vendor_id && device.device_id == device_id) return &device;
  }
  return nullptr;
}

const KnownDevice* FindKnownModel(std::string_view model) {
  std::string wanted = ToLower(model);
  for (const KnownDevice& device : KnownDevices()) {
    if (ToLower(device.model) == wanted) return &device;
  }
  return nullptr;
}

std::string GfxTargetName(uint64_t gfx_target_version) {
  if (gfx_target_version == 0) return "";
  uint64_t major = gfx_target_version / 10000;
  uint64_t minor = gfx_target_version / 100 % 100;
  uint64_t stepping = gfx_target_version % 100;
  auto hex_digit = [](uint64_t value) { return std::string(1, "0123456789abcdef"[value & 0xf]); };
  return "gfx" + std::to_string(major) + hex_digit(minor) + hex_digit(stepping);
}

std::string NvidiaArchFromDeviceId(uint16_t device_id) {
  switch (device_id >> 8) {
    case 0x20: return "sm80";
    case 0x23: return "sm90";
    case 0x29: return "sm100";
    default: return "";
  }
}

}  // namespace primus::platform
