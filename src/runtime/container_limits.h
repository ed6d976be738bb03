// The resource limits a training container asks for, and what to ask for
// where the host does not allow them. RDMA and NCCL/RCCL want unlocked
// memory (memlock unlimited) and many open files (nofile 1048576); the
// engine applies them with setrlimit inside the new container, which fails
// outright ("crun: setrlimit RLIMIT_NOFILE: Operation not permitted") when
// the value is above the launching process's hard limit and it lacks
// CAP_SYS_RESOURCE. Podman also asks for nproc 1048576 by default, and caps
// its own nproc at kernel.pid_max. So: the wanted value where the host
// permits it, else the hard limit we have, with a warning naming both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/container_engine.h"

namespace primus::runtime {

inline constexpr uint64_t kUnlimited = UINT64_MAX;

struct HostLimits {
  uint64_t memlock_hard = kUnlimited;  // bytes
  uint64_t nofile_hard = kUnlimited;
  uint64_t nproc_hard = kUnlimited;
  uint64_t pid_max = kUnlimited;       // /proc/sys/kernel/pid_max
  bool can_raise = true;               // CAP_SYS_RESOURCE in the effective set
};

// This process's hard limits and capability.
HostLimits ReadHostLimits();

struct UlimitPlan {
  std::vector<std::string> values;    // "memlock=-1:-1", "nofile=20000:20000": each one --ulimit
  std::vector<std::string> warnings;  // one line per limit that could not be raised
};

// `user_set` names limits the user gave with their own --ulimit (left to them).
UlimitPlan PlanUlimits(EngineKind engine, const HostLimits& host, const std::vector<std::string>& user_set = {});

}  // namespace primus::runtime
