#include "preflight/host_checks.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <fmt/format.h>

#include "util/files.h"
#include "util/strings.h"

namespace primus::preflight {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMemlockMin = 32 * kGiB;
constexpr int64_t kShmMin = 8 * kGiB;
constexpr int64_t kNofileMin = 65536;
constexpr int64_t kDiskFail = 10 * kGiB;
constexpr int64_t kDiskWarn = 100 * kGiB;

int64_t FreeBytes(const std::string& path, bool total) {
  struct statvfs info {};
  if (::statvfs(path.c_str(), &info) != 0) return -1;
  return static_cast<int64_t>((total ? info.f_blocks : info.f_bavail) * info.f_frsize);
}

int64_t MeminfoBytes(const std::string& meminfo, const std::string& key) {
  for (const std::string& line : Split(meminfo, '\n')) {
    if (!line.starts_with(key + ":")) continue;
    auto kib = ParseInt(Trim(ReplaceAll(line.substr(key.size() + 1), "kB", "")));
    return kib ? *kib * 1024 : -1;
  }
  return -1;
}

}  // namespace

HostFacts ReadHostFacts(const platform::Roots& roots, const std::string& workspace) {
  HostFacts facts;
  rlimit limit{};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    facts.memlock_bytes = limit.rlim_cur == RLIM_INFINITY ? -1 : static_cast<int64_t>(limit.rlim_cur);
  }
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) facts.nofile = static_cast<int64_t>(limit.rlim_cur);
  facts.shm_bytes = FreeBytes("/dev/shm", true);
  facts.workspace = workspace;
  // The workspace may not exist yet: its nearest existing parent holds it.
  std::string existing = workspace;
  while (!existing.empty() && existing != "/" && !PathExists(existing)) existing = DirName(existing);
  facts.workspace_free_bytes = FreeBytes(existing.empty() ? "." : existing, false);
  auto meminfo = ReadFile(roots.Proc("meminfo"));
  if (meminfo.ok()) {
    facts.mem_available_bytes = MeminfoBytes(*meminfo, "MemAvailable");
    facts.mem_total_bytes = MeminfoBytes(*meminfo, "MemTotal");
  }
  if (auto text = ReadFile(roots.Proc("sys/kernel/numa_balancing")); text.ok()) facts.numa_balancing = Trim(*text);
  if (auto text = ReadFile(roots.Proc("cmdline")); text.ok()) facts.kernel_cmdline = Trim(*text);
  return facts;
}

std::vector<CheckResult> CheckHost(const HostFacts& facts) {
  std::vector<CheckResult> results;
  const std::string host = "host";
  // memlock: RDMA registers memory; NCCL/RCCL over IB/RoCE want it unlimited.
  if (facts.memlock_bytes < 0) {
    results.push_back(Pass(host, "memlock", "unlimited", "unlimited"));
  } else {
    std::string value = Bytes(static_cast<double>(facts.memlock_bytes));
    std::string fix = "raise it: `ulimit -l unlimited` (limits.conf: * - memlock unlimited; containers: --ulimit memlock=-1)";
    if (facts.memlock_bytes >= kMemlockMin) results.push_back(Pass(host, "memlock", value, ">= 32 GiB or unlimited"));
    else if (facts.rdma) results.push_back(Fail(host, "memlock", value, ">= 32 GiB or unlimited (RDMA present)", fix));
    else results.push_back(Warn(host, "memlock", value, ">= 32 GiB or unlimited", fix));
  }
  if (facts.shm_bytes < 0) {
    results.push_back(Fail(host, "/dev/shm", "missing", ">= 8 GiB", "mount a tmpfs on /dev/shm (containers: --shm-size 64g or --ipc=host)"));
  } else if (facts.shm_bytes < kShmMin) {
    results.push_back(Fail(host, "/dev/shm", Bytes(static_cast<double>(facts.shm_bytes)), ">= 8 GiB",
                           "NCCL and dataloaders need a large /dev/shm: --shm-size 64g or --ipc=host (Docker's 64 MiB default breaks NCCL)"));
  } else {
    results.push_back(Pass(host, "/dev/shm", Bytes(static_cast<double>(facts.shm_bytes)), ">= 8 GiB"));
  }
  if (facts.nofile >= 0 && facts.nofile < kNofileMin) {
    results.push_back(Warn(host, "open files", std::to_string(facts.nofile), ">= 65536",
                           "`ulimit -n 1048576` (dataloader workers and many ranks open many files and sockets)"));
  } else {
    results.push_back(Pass(host, "open files", std::to_string(facts.nofile), ">= 65536"));
  }
  std::string disk_name = "disk " + facts.workspace;
  if (facts.workspace_free_bytes < 0) {
    results.push_back(Skip(host, disk_name, "cannot read the free space"));
  } else if (facts.workspace_free_bytes < kDiskFail) {
    results.push_back(Fail(host, disk_name, Bytes(static_cast<double>(facts.workspace_free_bytes)) + " free", ">= 10 GiB",
                           "free space or point the workspace elsewhere: checkpoints will not fit"));
  } else if (facts.workspace_free_bytes < kDiskWarn) {
    results.push_back(Warn(host, disk_name, Bytes(static_cast<double>(facts.workspace_free_bytes)) + " free", ">= 100 GiB",
                           "large checkpoints may not fit; free space or use another workspace"));
  } else {
    results.push_back(Pass(host, disk_name, Bytes(static_cast<double>(facts.workspace_free_bytes)) + " free", ">= 100 GiB"));
  }
  if (facts.mem_available_bytes >= 0 && facts.mem_total_bytes > 0) {
    double share = static_cast<double>(facts.mem_available_bytes) / static_cast<double>(facts.mem_total_bytes);
    std::string value = fmt::format("{} available of {}", Bytes(static_cast<double>(facts.mem_available_bytes)),
                                    Bytes(static_cast<double>(facts.mem_total_bytes)));
    if (share < 0.1) {
      results.push_back(Fail(host, "free memory", value, ">= 25% available",
                             "something else holds the memory: find it (ps aux --sort=-rss) before the job is OOM-killed"));
    } else if (share < 0.25) {
      results.push_back(Warn(host, "free memory", value, ">= 25% available", "check for leftover processes (ps aux --sort=-rss)"));
    } else {
      results.push_back(Pass(host, "free memory", value, ">= 25% available"));
    }
  }
  if (facts.amd_gpus) {
    if (facts.numa_balancing.empty()) {
      results.push_back(Skip(host, "numa_balancing", "/proc/sys/kernel/numa_balancing not readable"));
    } else if (facts.numa_balancing != "0") {
      results.push_back(Warn(host, "numa_balancing", facts.numa_balancing, "0",
                             "sysctl -w kernel.numa_balancing=0 (ROCm: page migration under the GPUs' DMA)"));
    } else {
      results.push_back(Pass(host, "numa_balancing", "0", "0"));
    }
    bool iommu_pt = false;
    for (const std::string& word : Split(facts.kernel_cmdline, ' ')) iommu_pt |= word == "iommu=pt";
    if (facts.kernel_cmdline.empty()) results.push_back(Skip(host, "iommu=pt", "/proc/cmdline not readable"));
    else if (iommu_pt) results.push_back(Pass(host, "iommu=pt", "set", "iommu=pt on the kernel command line"));
    else {
      results.push_back(Warn(host, "iommu=pt", "not set", "iommu=pt on the kernel command line",
                             "add iommu=pt to GRUB_CMDLINE_LINUX and reboot (ROCm: peer-to-peer and RDMA speed)"));
    }
  }
  return results;
}

}  // namespace primus::preflight
