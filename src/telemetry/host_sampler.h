// The host's share of a node sample, read from procfs under platform::Roots
// (so tests point it at a fixture tree): CPU use from /proc/stat, memory from
// /proc/meminfo, one interface's byte counters from /proc/net/dev, and each
// worker's CPU use, resident memory and state from /proc/<pid>/stat and
// statm. Percentages and rates are differences between two samples, so the
// sampler keeps the previous counters; the first sample has none.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/roots.h"
#include "telemetry/node_sample.h"

namespace primus::telemetry {

// Pure parsers of the kernel's formats (exposed for tests).
struct CpuTimes {
  int cpus = 0;
  uint64_t busy = 0, total = 0;  // clock ticks, all CPUs
};
std::optional<CpuTimes> ParseProcStat(std::string_view text);
struct MemoryInfo {
  int64_t total_bytes = 0, used_bytes = 0;  // used = MemTotal - MemAvailable
};
std::optional<MemoryInfo> ParseMeminfo(std::string_view text);
struct InterfaceCounters {
  uint64_t rx_bytes = 0, tx_bytes = 0;
};
std::optional<InterfaceCounters> ParseNetDev(std::string_view text, const std::string& interface);
struct ProcessStat {
  char state = '?';
  uint64_t cpu_ticks = 0;  // utime + stime
};
std::optional<ProcessStat> ParsePidStat(std::string_view text);
// "running", "sleeping", "disk-sleep", "stopped", "zombie", "exited".
std::string StateName(char state);

// One worker as the supervisor knows it.
struct WorkerProbe {
  int rank = 0;
  int local_rank = 0;
  int pid = 0;
  bool running = false;
};

class HostSampler {
 public:
  // `interface`: the one the job's traffic uses ("" reports none).
  HostSampler(platform::Roots roots, std::string interface);

  // `now`: a monotonic time in seconds, for rates.
  HostStats SampleHost(double now);
  // state, cpu_percent and rss_bytes of each worker (no metrics).
  std::vector<WorkerStats> SampleWorkers(const std::vector<WorkerProbe>& workers, double now);

 private:
  struct Previous {
    double time = 0;
    uint64_t a = 0, b = 0;
  };
  platform::Roots roots_;
  std::string interface_;
  std::optional<Previous> cpu_, net_;
  std::map<int, Previous> pids_;  // by pid
  double ticks_per_second_;
  int64_t page_bytes_;
};

}  // namespace primus::telemetry
