#include "platform/nvidia_gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "platform/device_table.h"
#include "platform/pci_devices.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

bool IsNvidiaGpu(const PciDevice& device) {
  return device.vendor_id == kNvidiaVendorId && (device.class_code >> 16) == 0x03;
}

// The table model whose name appears as a whole word in the driver's name
// ("NVIDIA H100 80GB HBM3" -> H100), for GPUs whose PCI entry is missing.
const KnownDevice* KnownFromName(const std::string& name) {
  const KnownDevice* best = nullptr;
  for (const std::string& word : Split(name, ' ')) {
    for (const KnownDevice& device : KnownDevices()) {
      if (device.vendor == "nvidia" && device.model == word && !best) best = &device;
    }
  }
  return best;
}

void Describe(GpuInfo& gpu) {
  gpu.vendor = "nvidia";
  gpu.numa_node = gpu.pci.numa_node;
  if (!gpu.pci.bus_id.empty()) {
    gpu.vendor_id = gpu.pci.vendor_id;
    gpu.device_id = gpu.pci.device_id;
    gpu.known = FindKnownDevice(gpu.vendor_id, gpu.device_id);
  } else {
    gpu.vendor_id = kNvidiaVendorId;
    gpu.known = KnownFromName(gpu.product);
  }
  if (gpu.known) {
    gpu.model = std::string(gpu.known->model);
    gpu.arch = std::string(gpu.known->arch);
    if (gpu.product.empty()) gpu.product = std::string(gpu.known->product);
    if (gpu.known->memory_gib > 0) {
      gpu.memory_bytes = static_cast<int64_t>(gpu.known->memory_gib * (1LL << 30));
      gpu.memory_source = "device table";
    }
  } else {
    gpu.arch = NvidiaArchFromDeviceId(gpu.device_id);
    if (gpu.product.empty()) gpu.product = fmt::format("NVIDIA GPU (device 0x{:04x})", gpu.device_id);
    log::Info("NVIDIA device 0x{:04x} is not in the device table: {}", gpu.device_id,
              gpu.arch.empty() ? "no architecture profile applies" : "using the " + gpu.arch + " profile");
  }
}

}  // namespace

std::string NvidiaDriverVersion(const Roots& roots) {
  auto content = ReadFile(roots.Proc("driver/nvidia/version"));
  if (!content.ok()) return "";
  for (const std::string& line : Split(*content, '\n')) {
    if (line.rfind("NVRM version:", 0) != 0) continue;
    for (const std::string& word : Split(line, ' ')) {
      bool version = word.find('.') != std::string::npos && !word.empty();
      for (char c : word) version = version && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
      if (version) return word;
    }
  }
  return "";
}

std::vector<GpuInfo> DetectNvidiaGpus(const Roots& roots, const std::vector<PciDevice>& pci,
                                      Diagnostics& diagnostics) {
  std::vector<GpuInfo> gpus;
  std::string procfs_dir = roots.Proc("driver/nvidia/gpus");
  if (!IsDirectory(procfs_dir)) {
    int unbound = 0;
    for (const PciDevice& device : pci) {
      if (!IsNvidiaGpu(device)) continue;
      if (device.driver != "nvidia") {
        ++unbound;
        continue;
      }
      GpuInfo gpu;
      gpu.pci = device;
      gpu.pci_bus_id = device.bus_id;
      Describe(gpu);
      gpus.push_back(std::move(gpu));
    }
    if (!gpus.empty()) {
      diagnostics.Warn(fmt::format("{} is missing: {} NVIDIA GPU(s) taken from the PCI bus without "
                                   "model names or UUIDs", procfs_dir, gpus.size()));
    }
    if (unbound > 0) {
      diagnostics.Warn(fmt::format("{} NVIDIA GPU(s) on the PCI bus are not bound to the nvidia "
                                   "driver and cannot run CUDA work", unbound));
    }
    return gpus;
  }

  std::vector<std::string> bus_ids = ListDirectory(procfs_dir);
  std::sort(bus_ids.begin(), bus_ids.end());  // hex bus ids: byte order is bus order
  for (const std::string& entry : bus_ids) {
    GpuInfo gpu;
    std::string information_path = procfs_dir + "/" + entry + "/information";
    auto information = ReadFile(information_path);
    std::vector<KeyValueLine> lines;
    if (information.ok()) {
      lines = ParseKeyValueLines(*information, ':');
    } else {
      diagnostics.Warn("cannot read " + information_path + "; the GPU is taken from its PCI entry");
    }
    gpu.product = FindValue(lines, "Model").value_or("");
    gpu.uuid = FindValue(lines, "GPU UUID").value_or("");
    gpu.pci_bus_id = NormalizeBusId(FindValue(lines, "Bus Location").value_or(entry));
    if (auto minor = FindValue(lines, "Device Minor")) gpu.device_minor = static_cast<int>(ParseInt(*minor).value_or(-1));
    if (information.ok() && gpu.product.empty()) {
      diagnostics.Warn(information_path + " has no 'Model:' line");
    }
    gpu.pci = FindOrReadPciDevice(roots, pci, gpu.pci_bus_id);
    Describe(gpu);
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace primus::platform
