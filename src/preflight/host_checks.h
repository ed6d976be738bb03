// Host checks: memlock, /dev/shm, open files, free disk in the workspace,
// free memory, and on AMD GPU hosts kernel.numa_balancing=0 and iommu=pt
// (thresholds from ../shared/reference/hardware.md). HostFacts is what they
// read; ReadHostFacts gathers it from this process and the procfs root, so a
// test can give any facts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/roots.h"
#include "preflight/check_result.h"

namespace primus::preflight {

struct HostFacts {
  int64_t memlock_bytes = -1;   // -1: unlimited
  int64_t shm_bytes = -1;       // /dev/shm size; -1 unknown
  int64_t nofile = -1;          // soft RLIMIT_NOFILE
  std::string workspace;
  int64_t workspace_free_bytes = -1;
  int64_t mem_available_bytes = -1;
  int64_t mem_total_bytes = -1;
  std::string numa_balancing;   // /proc/sys/kernel/numa_balancing, "" unknown
  std::string kernel_cmdline;   // /proc/cmdline
  bool amd_gpus = false;
  bool rdma = false;            // RDMA ports present: memlock matters
};

HostFacts ReadHostFacts(const platform::Roots& roots, const std::string& workspace);
std::vector<CheckResult> CheckHost(const HostFacts& facts);

}  // namespace primus::preflight
