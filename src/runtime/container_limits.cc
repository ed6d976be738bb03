#include "runtime/container_limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>

#include "util/strings.h"

namespace primus::runtime {
namespace {

constexpr int kCapSysResource = 24;
constexpr uint64_t kWantedNofile = 1048576;

uint64_t Hard(int resource) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_max == RLIM_INFINITY) return kUnlimited;
  return limit.rlim_max;
}

// "CapEff:\t000001fffeffffff" from /proc/self/status.
bool HasEffectiveCapability(int capability) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("CapEff:")) continue;
    try {
      uint64_t mask = std::stoull(std::string(Trim(line.substr(7))), nullptr, 16);
      return (mask >> capability) & 1;
    } catch (...) {
      return false;
    }
  }
  return false;
}

std::string Text(uint64_t value) { return value == kUnlimited ? "-1" : std::to_string(value); }

std::string Describe(uint64_t value, bool bytes) {
  if (value == kUnlimited) return "unlimited";
  if (bytes && value % (1024 * 1024) == 0) return std::to_string(value / (1024 * 1024)) + " MiB";
  return std::to_string(value);
}

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

HostLimits ReadHostLimits() {
  HostLimits host;
  host.memlock_hard = Hard(RLIMIT_MEMLOCK);
  host.nofile_hard = Hard(RLIMIT_NOFILE);
  host.nproc_hard = Hard(RLIMIT_NPROC);
  std::ifstream pid_max("/proc/sys/kernel/pid_max");
  uint64_t value = 0;
  if (pid_max >> value && value > 0) host.pid_max = value;
  host.can_raise = HasEffectiveCapability(kCapSysResource);
  return host;
}

UlimitPlan PlanUlimits(EngineKind engine, const HostLimits& host, const std::vector<std::string>& user_set) {
  UlimitPlan plan;
  struct Wanted {
    std::string name;
    uint64_t value;
    uint64_t hard;
    bool bytes;
  };
  std::vector<std::string> lowered;
  for (const Wanted& wanted : {Wanted{"memlock", kUnlimited, host.memlock_hard, true},
                               Wanted{"nofile", kWantedNofile, host.nofile_hard, false}}) {
    if (Contains(user_set, wanted.name)) continue;
    uint64_t value = wanted.value;
    if (!host.can_raise && wanted.hard < wanted.value) {
      value = wanted.hard;
      lowered.push_back(wanted.name + " " + Describe(value, wanted.bytes) + " (not " +
                        Describe(wanted.value, wanted.bytes) + ")");
    }
    plan.values.push_back(wanted.name + "=" + Text(value) + ":" + Text(value));
  }
  if (!lowered.empty()) {
    plan.warnings.push_back("the container gets this host's hard limits, " + Join(lowered, ", ") +
                            ": raising them needs CAP_SYS_RESOURCE (raise the hard limits in "
                            "/etc/security/limits.conf or in the service that starts primus-cli)");
  }
  // Podman's own default (nproc 1048576) fails the same way; docker inherits
  // the daemon's limit, which is always settable.
  if (engine == EngineKind::kPodman && !host.can_raise && !Contains(user_set, "nproc")) {
    uint64_t value = std::min(host.nproc_hard, host.pid_max);
    plan.values.push_back("nproc=" + Text(value) + ":" + Text(value));
  }
  return plan;
}

}  // namespace primus::runtime
