#include "platform/host_detect.h"

#include <chrono>

#include "platform/amd_gpus.h"
#include "platform/host_system.h"
#include "platform/network_devices.h"
#include "platform/nvidia_gpus.h"
#include "platform/pci_devices.h"
#include "platform/routing.h"

namespace primus::platform {

HostInfo DetectHost(const Roots& roots) {
  auto start = std::chrono::steady_clock::now();
  HostInfo host;
  Diagnostics diagnostics;
  DetectHostSystem(roots, diagnostics, host);

  host.accelerators = ScanPciAccelerators(roots, diagnostics);
  host.gpus = DetectAmdGpus(roots, host.accelerators, diagnostics);
  std::vector<GpuInfo> nvidia = DetectNvidiaGpus(roots, host.accelerators, diagnostics);
  host.gpus.insert(host.gpus.end(), nvidia.begin(), nvidia.end());
  for (size_t i = 0; i < host.gpus.size(); ++i) host.gpus[i].index = static_cast<int>(i);
  host.nvidia_driver_version = NvidiaDriverVersion(roots);
  host.amdgpu_driver_version = ReadAttribute(roots.Sys("module/amdgpu/version")).value_or("");

  host.ib_ports = DetectIbPorts(roots, diagnostics);
  host.interfaces = DetectInterfaces(roots, diagnostics);
  host.routes = ReadRoutes(roots, diagnostics);

  host.warnings = diagnostics.warnings();
  host.detection_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return host;
}

}  // namespace primus::platform
