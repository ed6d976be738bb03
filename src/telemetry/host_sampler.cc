#include "telemetry/host_sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <cstdlib>

#include "platform/sysfs_files.h"
#include "util/strings.h"

namespace primus::telemetry {
namespace {

// Small procfs files are read whole; /proc/net/dev on a host with thousands
// of interfaces stays well under this.
constexpr size_t kMaxProcFileBytes = 1 << 20;

// open/read/close, no stdio: procfs files report size 0, so read until EOF.
std::optional<std::string> ReadProc(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[8192];
  while (text.size() < kMaxProcFileBytes) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

std::optional<uint64_t> Number(std::string_view text) { return platform::ParseUnsigned(text); }

}  // namespace

std::optional<CpuTimes> ParseProcStat(std::string_view text) {
  std::optional<CpuTimes> times;
  int cpus = 0;
  for (const std::string& line : Split(text, '\n')) {
    if (line.rfind("cpu", 0) != 0) continue;
    std::vector<std::string_view> fields = Fields(line);
    if (fields.empty()) continue;
    if (fields[0] != "cpu") {
      ++cpus;
      continue;
    }
    // user nice system idle iowait irq softirq steal (guest is inside user)
    if (fields.size() < 5) return std::nullopt;
    CpuTimes total;
    uint64_t idle = 0;
    for (size_t i = 1; i < fields.size() && i <= 8; ++i) {
      auto value = Number(fields[i]);
      if (!value) return std::nullopt;
      total.total += *value;
      if (i == 4 || i == 5) idle += *value;  // idle, iowait
    }
    total.busy = total.total - idle;
    times = total;
  }
  if (times) times->cpus = cpus;
  return times;
}

std::optional<MemoryInfo> ParseMeminfo(std::string_view text) {
  std::vector<platform::KeyValueLine> lines = platform::ParseKeyValueLines(text, ':');
  auto kib = [&](std::string_view key) -> std::optional<int64_t> {
    std::optional<std::string> value = platform::FindValue(lines, key);
    if (!value) return std::nullopt;
    std::vector<std::string_view> fields = Fields(*value);
    if (fields.empty()) return std::nullopt;
    auto number = Number(fields[0]);
    if (!number) return std::nullopt;
    return static_cast<int64_t>(*number) * 1024;
  };
  std::optional<int64_t> total = kib("MemTotal");
  std::optional<int64_t> available = kib("MemAvailable");
  if (!available) available = kib("MemFree");
  if (!total || !available) return std::nullopt;
  return MemoryInfo{*total, *total - *available};
}

std::optional<InterfaceCounters> ParseNetDev(std::string_view text, const std::string& interface) {
  for (const std::string& raw : Split(text, '\n')) {
    std::string_view line = raw;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::vector<std::string_view> name = Fields(line.substr(0, colon));
    if (name.size() != 1 || name[0] != interface) continue;
    std::vector<std::string_view> fields = Fields(line.substr(colon + 1));
    if (fields.size() < 9) return std::nullopt;
    auto rx = Number(fields[0]), tx = Number(fields[8]);
    if (!rx || !tx) return std::nullopt;
    return InterfaceCounters{*rx, *tx};
  }
  return std::nullopt;
}

std::optional<ProcessStat> ParsePidStat(std::string_view text) {
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
  size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields = Fields(text.substr(close + 1));
  // fields[0] is the state (field 3); utime and stime are fields 14 and 15.
  if (fields.size() < 13 || fields[0].size() != 1) return std::nullopt;
  auto utime = Number(fields[11]), stime = Number(fields[12]);
  if (!utime || !stime) return std::nullopt;
  return ProcessStat{fields[0][0], *utime + *stime};
}

std::string StateName(char state) {
  switch (state) {
    case 'R': return "running";
    case 'S':
    case 'I': return "sleeping";
    case 'D': return "disk-sleep";
    case 'T':
    case 't': return "stopped";
    case 'Z': return "zombie";
    default: return "exited";
  }
}

HostSampler::HostSampler(platform::Roots roots, std::string interface)
    : roots_(std::move(roots)), interface_(std::move(interface)) {
  long ticks = ::sysconf(_SC_CLK_TCK);
  ticks_per_second_ = ticks > 0 ? static_cast<double>(ticks) : 100.0;
  long page = ::sysconf(_SC_PAGESIZE);
  page_bytes_ = page > 0 ? page : 4096;
}

HostStats HostSampler::SampleHost(double now) {
  HostStats stats;
  if (auto text = ReadProc(roots_.Proc("stat"))) {
    if (std::optional<CpuTimes> times = ParseProcStat(*text)) {
      if (times->cpus > 0) stats.cpus = times->cpus;
      if (cpu_ && times->total > cpu_->b && times->busy >= cpu_->a) {
        double busy = static_cast<double>(times->busy - cpu_->a);
        double total = static_cast<double>(times->total - cpu_->b);
        stats.cpu_percent = busy / total * 100.0 * std::max(1, times->cpus);
      }
      cpu_ = Previous{now, times->busy, times->total};
    }
  }
  if (auto text = ReadProc(roots_.Proc("meminfo"))) {
    if (std::optional<MemoryInfo> memory = ParseMeminfo(*text)) {
      stats.mem_total_bytes = memory->total_bytes;
      stats.mem_used_bytes = memory->used_bytes;
    }
  }
  if (!interface_.empty()) {
    NetStats net;
    net.interface = interface_;
    if (auto text = ReadProc(roots_.Proc("net/dev"))) {
      if (std::optional<InterfaceCounters> counters = ParseNetDev(*text, interface_)) {
        net.rx_bytes = counters->rx_bytes;
        net.tx_bytes = counters->tx_bytes;
        if (net_ && now > net_->time && counters->rx_bytes >= net_->a && counters->tx_bytes >= net_->b) {
          double seconds = now - net_->time;
          net.rx_bytes_per_s = static_cast<double>(counters->rx_bytes - net_->a) / seconds;
          net.tx_bytes_per_s = static_cast<double>(counters->tx_bytes - net_->b) / seconds;
        }
        net_ = Previous{now, counters->rx_bytes, counters->tx_bytes};
      }
    }
    stats.net.push_back(std::move(net));
  }
  return stats;
}

std::vector<WorkerStats> HostSampler::SampleWorkers(const std::vector<WorkerProbe>& workers, double now) {
  std::vector<WorkerStats> result;
  std::map<int, Previous> seen;
  for (const WorkerProbe& probe : workers) {
    WorkerStats stats;
    stats.rank = probe.rank;
    stats.local_rank = probe.local_rank;
    stats.pid = probe.pid;
    stats.state = "exited";
    std::optional<std::string> stat_text;
    if (probe.running && probe.pid > 0) {
      std::string dir = roots_.Proc(std::to_string(probe.pid));
      stat_text = ReadProc(dir + "/stat");
      if (stat_text) {
        if (std::optional<ProcessStat> stat = ParsePidStat(*stat_text)) {
          stats.state = StateName(stat->state);
          auto previous = pids_.find(probe.pid);
          if (previous != pids_.end() && now > previous->second.time && stat->cpu_ticks >= previous->second.a) {
            stats.cpu_percent = static_cast<double>(stat->cpu_ticks - previous->second.a) / ticks_per_second_ /
                                (now - previous->second.time) * 100.0;
          }
          seen[probe.pid] = Previous{now, stat->cpu_ticks, 0};
        }
        if (auto statm = ReadProc(dir + "/statm")) {
          std::vector<std::string_view> fields = Fields(*statm);
          if (fields.size() >= 2) {
            if (auto pages = Number(fields[1])) stats.rss_bytes = static_cast<int64_t>(*pages) * page_bytes_;
          }
        }
      }
    }
    result.push_back(std::move(stats));
  }
  pids_ = std::move(seen);  // forget workers that are gone
  return result;
}

}  // namespace primus::telemetry
