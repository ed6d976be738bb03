#include "runtime/container_command.h"

#include <algorithm>

namespace primus::runtime {
namespace {

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

void Add(std::vector<std::string>* argv, std::initializer_list<std::string> items) {
  argv->insert(argv->end(), items);
}

void AddGpuDevices(const ContainerSpec& spec, EngineCommand* command) {
  std::vector<std::string>& argv = command->argv;
  const GpuDevices& gpus = spec.gpus;
  if (gpus.vendor == "amd") {
    for (const char* device : {"/dev/kfd", "/dev/dri"}) {
      if (Has(gpus.present, device)) {
        Add(&argv, {"--device", device});
      } else {
        command->warnings.push_back(std::string("AMD GPUs were detected but ") + device +
                                    " is missing: the container will not see them (is the amdgpu driver loaded?)");
      }
    }
    for (unsigned gid : gpus.group_ids) Add(&argv, {"--group-add", std::to_string(gid)});
    Add(&argv, {"--security-opt", "seccomp=unconfined", "--cap-add", "SYS_PTRACE"});
  } else if (gpus.vendor == "nvidia") {
    if (spec.engine == EngineKind::kDocker) {
      Add(&argv, {"--gpus", "all"});
    } else {
      if (!gpus.nvidia_cdi) {
        command->warnings.push_back(
            "NVIDIA GPUs were detected but no CDI specification for nvidia.com/gpu was found in /etc/cdi or "
            "/var/run/cdi: podman will refuse the device (generate one: nvidia-ctk cdi generate "
            "--output=/etc/cdi/nvidia.yaml)");
      }
      Add(&argv, {"--device", "nvidia.com/gpu=all"});
    }
  }
  if (Has(gpus.present, "/dev/infiniband")) Add(&argv, {"--device", "/dev/infiniband", "--cap-add", "IPC_LOCK"});
}

}  // namespace

bool HasEngineFlag(const std::vector<std::string>& options, const std::vector<std::string>& names) {
  for (const std::string& option : options) {
    for (const std::string& name : names) {
      if (option == name || option.starts_with(name + "=")) return true;
    }
  }
  return false;
}

std::vector<std::string> UserUlimits(const std::vector<std::string>& options) {
  std::vector<std::string> names;
  for (size_t i = 0; i < options.size(); ++i) {
    std::string value;
    if (options[i] == "--ulimit" && i + 1 < options.size()) value = options[i + 1];
    else if (options[i].starts_with("--ulimit=")) value = options[i].substr(9);
    else continue;
    names.push_back(value.substr(0, value.find('=')));
  }
  return names;
}

EngineCommand BuildEngineCommand(const ContainerSpec& spec) {
  EngineCommand command;
  std::vector<std::string>& argv = command.argv;
  const std::vector<std::string>& user = spec.engine_options;
  Add(&argv, {spec.engine_executable, "run", "--rm", "--name", spec.name, "--pull=" + spec.pull});
  if (!HasEngineFlag(user, {"--network", "--net"})) {
    argv.push_back("--network=host");
  } else {
    command.warnings.push_back("your --network replaces --network=host: nodes of a multi-node job reach each "
                               "other's control channel and rendezvous through host ports");
  }
  if (!spec.shm_size.empty()) {
    Add(&argv, {"--shm-size", spec.shm_size});
  } else if (!HasEngineFlag(user, {"--ipc"})) {
    argv.push_back("--ipc=host");
  }
  if (!spec.user.empty()) Add(&argv, {"--user", spec.user});
  if (!spec.mounts.workdir.empty() && !HasEngineFlag(user, {"--workdir", "-w"})) {
    Add(&argv, {"--workdir", spec.mounts.workdir});
  }
  for (const std::string& limit : spec.ulimits) Add(&argv, {"--ulimit", limit});
  AddGpuDevices(spec, &command);
  for (const std::string& device : spec.devices) Add(&argv, {"--device", device});
  for (const Mount& mount : spec.mounts.mounts) {
    if (mount.raw.empty()) Add(&argv, {"-v", mount.Spec()});
    else Add(&argv, {"--mount", mount.raw});
  }
  for (const std::string& name : spec.env_names) Add(&argv, {"--env", name});
  argv.insert(argv.end(), user.begin(), user.end());
  if (HasEngineFlag(user, {"--entrypoint"})) {
    // Their entrypoint runs first and gets the inner command as arguments.
    Add(&argv, {spec.image, kInnerBinary});
  } else {
    Add(&argv, {"--entrypoint", kInnerBinary, spec.image});
  }
  argv.insert(argv.end(), spec.inner_args.begin(), spec.inner_args.end());
  return command;
}

}  // namespace primus::runtime
