#include "train/system_info.h"

#include "platform/runtime_versions.h"
#include "util/environment.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::train {

nlohmann::ordered_json DescribeSystem(const platform::HostInfo& host) {
  nlohmann::ordered_json info;
  info["primus_version"] = PRIMUS_VERSION;
  info["host"] = host.hostname;
  info["os"] = host.os;
  info["kernel"] = host.kernel;
  info["cpu_model"] = host.cpu_model;
  info["cpus"] = host.logical_cpus;
  info["gpu_count"] = host.gpus.size();
  if (host.gpus.empty()) {
    info["gpu_vendor"] = nullptr;
    info["gpu_model"] = nullptr;
  } else {
    // A node with mixed GPUs lists them all: "MI300X,MI300X,..." would be noise,
    // so the distinct models, in order.
    std::vector<std::string> models, vendors;
    for (const auto& gpu : host.gpus) {
      std::string model = gpu.model.empty() ? gpu.product : gpu.model;
      if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
      if (std::find(vendors.begin(), vendors.end(), gpu.vendor) == vendors.end()) vendors.push_back(gpu.vendor);
    }
    info["gpu_vendor"] = Join(vendors, ",");
    info["gpu_model"] = Join(models, ",");
    info["gpu_arch"] = host.gpus.front().arch;
  }
  std::string driver = !host.nvidia_driver_version.empty() ? host.nvidia_driver_version : host.amdgpu_driver_version;
  info["driver"] = driver.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(driver);
  // The runtimes' user-space versions (platform/runtime_versions.h): null when not found.
  platform::RuntimeVersions versions = platform::ReadRuntimeVersions("", ProcessEnvironment());
  auto text = [](const std::string& value) {
    return value.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(value);
  };
  info["rocm"] = text(versions.rocm);
  info["hip"] = text(versions.hip);
  info["rccl"] = text(versions.rccl);
  info["cuda"] = text(versions.cuda);
  info["nccl"] = text(versions.nccl);
  return info;
}

void AddPythonVersions(const std::string& interpreter, nlohmann::ordered_json* info) {
  CommandOptions options;
  options.timeout_s = 20;
  auto run = RunCommand({interpreter, "-c",
                         "import sys, importlib.metadata as m\n"
                         "print(sys.version.split()[0])\n"
                         "try: print(m.version('torch'))\n"
                         "except Exception: print('-')\n"},
                        options);
  // What ran, for a replay to compare with (train/replay.h).
  (*info)["python_interpreter"] = interpreter;
  if (!run.ok() || run->exit_code != 0) return;
  std::vector<std::string> lines = Split(std::string(Trim(run->out)), '\n');
  if (lines.size() >= 2) {
    (*info)["python"] = lines[0];
    (*info)["torch"] = lines[1];
  }
}

}  // namespace primus::train
