// The engine command line for one launch, built from plain inputs by a pure
// function (no file, process or environment is consulted here), so every
// rule below is unit-tested and --dry-run prints exactly what runs:
//
//   <engine> run --rm --name NAME --pull=POLICY --network=host --ipc=host
//       [--shm-size S] [--user U] [--workdir CWD] [--ulimit ...]
//       [GPU devices for the vendor] [--device /dev/infiniband --cap-add IPC_LOCK]
//       [--device D ...] [-v HOST:CTR[:ro] ...] [--env NAME ...]
//       [container.options] [engine flags passed through]
//       --entrypoint /opt/primus/bin/primus-cli IMAGE <inner arguments>
//
// Devices by vendor: AMD /dev/kfd and /dev/dri (those present), their group
// ids (--group-add; video and render on the host, which need not exist by
// name in the image), seccomp=unconfined and SYS_PTRACE (ROCm debuggers and
// profilers); NVIDIA --gpus all (docker) or the CDI device
// nvidia.com/gpu=all (podman). /dev/infiniband only when it exists.
// --network=host is required (the agents' control channel and rendezvous use
// host ports); --ipc=host shares the host's /dev/shm, and an explicit
// --shm-size selects a private IPC namespace of that size instead (podman
// refuses both together). Flags the user passes through win: a --network,
// --ipc, --workdir or --entrypoint of theirs replaces ours.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/container_engine.h"
#include "runtime/container_mounts.h"

namespace primus::runtime {

struct GpuDevices {
  std::string vendor;                       // "amd" | "nvidia" | "" (none detected)
  std::vector<std::string> present;         // which of /dev/kfd, /dev/dri, /dev/infiniband exist
  std::vector<unsigned> group_ids;          // owning groups of the GPU device files (0 excluded)
  bool nvidia_cdi = false;                  // a CDI spec for nvidia.com/gpu exists (podman)
};

struct ContainerSpec {
  EngineKind engine = EngineKind::kPodman;
  std::string engine_executable = "podman";
  std::string image;
  std::string name;
  std::string pull = "missing";
  std::string user;                         // "" = the image's
  std::string shm_size;                     // "" = the host's /dev/shm (--ipc=host)
  GpuDevices gpus;
  std::vector<std::string> devices;         // --device values from the user
  MountPlan mounts;
  std::vector<std::string> env_names;       // --env NAME
  std::vector<std::string> ulimits;         // "nofile=20000:20000"
  std::vector<std::string> engine_options;  // container.options, then the flags passed through
  std::vector<std::string> inner_args;      // after the inner primus-cli
};

struct EngineCommand {
  std::vector<std::string> argv;
  std::vector<std::string> warnings;
};

EngineCommand BuildEngineCommand(const ContainerSpec& spec);

// Whether the user's engine flags contain `flag` ("--network"), as
// `--network X` or `--network=X`; `aliases` count too ("--net").
bool HasEngineFlag(const std::vector<std::string>& options, const std::vector<std::string>& names);

// The limit names (nofile, memlock ...) of the user's own --ulimit flags.
std::vector<std::string> UserUlimits(const std::vector<std::string>& options);

}  // namespace primus::runtime
