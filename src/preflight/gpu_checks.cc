#include "preflight/gpu_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/files.h"
#include "util/strings.h"

namespace primus::preflight {
namespace {

const std::string kGpu = "gpu";

// "32.0 GT/s PCIe" -> 32.0
double LinkSpeed(const std::string& text) { return ParseDouble(Split(text, ' ').empty() ? "" : Split(text, ' ')[0]).value_or(0); }

// amdgpu's ras/umc_err_count: "ue: N\nce: N".
bool ReadRas(const platform::Roots& roots, const std::string& bus_id, int64_t* ue, int64_t* ce) {
  auto text = ReadFile(roots.Sys("bus/pci/devices/" + bus_id + "/ras/umc_err_count"));
  if (!text.ok()) return false;
  for (const std::string& line : Split(*text, '\n')) {
    auto parts = Split(line, ':');
    if (parts.size() != 2) continue;
    auto value = ParseInt(Trim(parts[1]));
    if (!value) continue;
    if (Trim(parts[0]) == "ue") *ue = *value;
    if (Trim(parts[0]) == "ce") *ce = *value;
  }
  return true;
}

const platform::PciDevice* FindPci(const platform::HostInfo& host, const std::string& bus_id) {
  for (const platform::PciDevice& device : host.accelerators) {
    if (device.bus_id == bus_id) return &device;
  }
  return nullptr;
}

}  // namespace

std::string GpuModel(const platform::GpuInfo& gpu) {
  if (!gpu.model.empty()) return gpu.model;
  return gpu.product.empty() ? gpu.vendor : gpu.product;
}

std::vector<CheckResult> CheckGpus(const platform::HostInfo& host, const platform::Roots& roots,
                                   const std::vector<platform::GpuLiveStatus>& runtime,
                                   const GpuExpectations& expect) {
  std::vector<CheckResult> results;
  int count = static_cast<int>(host.gpus.size());
  if (count == 0) {
    if (expect.count > 0) {
      results.push_back(Fail(kGpu, "count", "0 GPUs detected", std::to_string(expect.count),
                             "check the driver (lsmod | grep -e amdgpu -e nvidia), the device files and *_VISIBLE_DEVICES"));
    } else {
      results.push_back(Skip(kGpu, "count", "no GPU detected (a CPU-only host); --expect-gpus N makes this a failure"));
    }
    return results;
  }
  if (expect.count >= 0 && count != expect.count) {
    results.push_back(Fail(kGpu, "count", std::to_string(count), std::to_string(expect.count),
                           "a GPU is missing or hidden: check dmesg, the driver, and *_VISIBLE_DEVICES; drain the node"));
  } else {
    results.push_back(Pass(kGpu, "count", std::to_string(count), expect.count >= 0 ? std::to_string(expect.count) : "any"));
  }
  std::map<std::string, int> models;
  for (const platform::GpuInfo& gpu : host.gpus) ++models[GpuModel(gpu)];
  std::vector<std::string> model_names;
  for (const auto& [model, n] : models) model_names.push_back(fmt::format("{} x{}", model, n));
  if (models.size() > 1) {
    results.push_back(Fail(kGpu, "model", Join(model_names, ", "), "one model on the node",
                           "mixed GPUs in one node: use --nproc-per-node and *_VISIBLE_DEVICES to pick one kind"));
  } else if (!expect.model.empty() && ToLower(models.begin()->first).find(ToLower(expect.model)) == std::string::npos) {
    results.push_back(Fail(kGpu, "model", models.begin()->first, expect.model,
                           "this node has other GPUs than the job expects: exclude it or fix --expect-model"));
  } else {
    results.push_back(Pass(kGpu, "model", models.begin()->first, expect.model.empty() ? "uniform" : expect.model));
  }
  std::string driver = !host.amdgpu_driver_version.empty() ? "amdgpu " + host.amdgpu_driver_version
                       : !host.nvidia_driver_version.empty() ? "nvidia " + host.nvidia_driver_version
                                                              : "";
  if (driver.empty()) results.push_back(Skip(kGpu, "driver", "driver version not readable"));
  else results.push_back(Pass(kGpu, "driver", driver, "the same on every node"));

  for (size_t i = 0; i < host.gpus.size(); ++i) {
    const platform::GpuInfo& gpu = host.gpus[i];
    std::string name = "GPU" + std::to_string(gpu.index);
    // PCIe link: a lane-width drop is a hardware fault; a lower speed at idle
    // can be power saving (NVIDIA GPUs idle at 2.5 GT/s), so only a warning.
    if (const platform::PciDevice* pci = FindPci(host, gpu.pci_bus_id); pci != nullptr && pci->max_link_width > 0) {
      std::string value = fmt::format("x{} {}", pci->current_link_width, pci->current_link_speed);
      std::string expected = fmt::format("x{} {}", pci->max_link_width, pci->max_link_speed);
      if (pci->current_link_width < pci->max_link_width) {
        results.push_back(Fail(kGpu, "pcie " + name, value, expected,
                               "the link trained down (" + gpu.pci_bus_id + "): reseat or replace the GPU/riser; drain the node"));
      } else if (LinkSpeed(pci->current_link_speed) + 0.01 < LinkSpeed(pci->max_link_speed)) {
        results.push_back(Warn(kGpu, "pcie " + name, value, expected,
                               "below maximum speed: normal at idle with power saving, a fault under load (check lspci -vv)"));
      }
    }
    int64_t ue = -1, ce = -1;
    if (gpu.vendor == "amd") ReadRas(roots, gpu.pci_bus_id, &ue, &ce);
    if (i < runtime.size()) {
      if (ue < 0) ue = runtime[i].ecc_uncorrected;
      if (ce < 0) ce = runtime[i].ecc_corrected;
    }
    if (ue > 0) {
      results.push_back(Fail(kGpu, "ecc " + name, fmt::format("{} uncorrectable, {} correctable", ue, ce), "0 uncorrectable",
                             "uncorrectable memory errors: drain the node and have " + gpu.pci_bus_id + " checked"));
    } else if (ce > 0) {
      results.push_back(Warn(kGpu, "ecc " + name, fmt::format("{} correctable", ce), "0",
                             "correctable errors are rising memory wear: watch the count, replace if it grows"));
    }
    if (i < runtime.size() && !runtime[i].processes.empty()) {
      std::vector<std::string> pids;
      for (const platform::GpuProcess& process : runtime[i].processes) {
        pids.push_back(process.used_memory_bytes > 0
                           ? fmt::format("{} ({})", process.pid, Bytes(static_cast<double>(process.used_memory_bytes)))
                           : std::to_string(process.pid));
      }
      results.push_back(Warn(kGpu, "processes " + name, "pid " + Join(pids, ", "), "none before the job",
                             "another process holds this GPU: end it (or drain the node) before the job starts"));
    }
    if (i < runtime.size() && runtime[i].memory_used_bytes > 0 && runtime[i].memory_total_bytes > 0) {
      double share = static_cast<double>(runtime[i].memory_used_bytes) / static_cast<double>(runtime[i].memory_total_bytes);
      if (share > 0.05) {
        results.push_back(Warn(kGpu, "memory " + name,
                               fmt::format("{} of {} in use", Bytes(static_cast<double>(runtime[i].memory_used_bytes)),
                                           Bytes(static_cast<double>(runtime[i].memory_total_bytes))),
                               "< 5% in use before the job", "a leftover process holds GPU memory: find it (rocm-smi / nvidia-smi)"));
      }
    }
  }
  // XGMI: every GPU of a hive should reach every other.
  if (host.gpus.front().vendor == "amd") {
    std::vector<std::string> short_links;
    bool hive = false;
    for (const platform::GpuInfo& gpu : host.gpus) {
      if (gpu.hive_id == 0) continue;
      hive = true;
      if (static_cast<int>(gpu.xgmi_peers.size()) < count - 1) {
        short_links.push_back(fmt::format("GPU{} has {} of {}", gpu.index, gpu.xgmi_peers.size(), count - 1));
      }
    }
    if (!hive) results.push_back(Skip(kGpu, "xgmi", "the GPUs are not in an XGMI hive (PCIe only)"));
    else if (!short_links.empty()) {
      results.push_back(Fail(kGpu, "xgmi", Join(short_links, "; "), "every GPU linked to every other",
                             "an XGMI link is down: check rocm-smi --showtopo and dmesg; drain the node"));
    } else {
      results.push_back(Pass(kGpu, "xgmi", fmt::format("all {} GPUs linked", count), "every GPU linked to every other"));
    }
  } else {
    results.push_back(Skip(kGpu, "nvlink", "NVLink state is not visible in sysfs: nvidia-smi nvlink --status"));
  }
  // Clean summaries for the checks that passed on every GPU.
  bool pcie_issue = std::any_of(results.begin(), results.end(), [](const CheckResult& r) { return r.name.starts_with("pcie "); });
  if (!pcie_issue) results.push_back(Pass(kGpu, "pcie", "every link at its maximum width and speed", "max"));
  bool ecc_issue = std::any_of(results.begin(), results.end(), [](const CheckResult& r) { return r.name.starts_with("ecc "); });
  if (!ecc_issue) results.push_back(Pass(kGpu, "ecc", "no error counted (where readable)", "0"));
  return results;
}

}  // namespace primus::preflight
