// Which process wrote a record, precisely enough to tell later whether it is
// still running: its host, pid and start time (a pid alone may be reused).
// metadata.json and job.json carry the launcher's stamp, so that `analyze`
// and `monitor` read a record whose writer died without finishing it (SIGKILL,
// a lost node) as "ended without a record", never as running forever.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace primus {

struct ProcessStamp {
  std::string host;      // short host name (log::HostName)
  int pid = 0;
  uint64_t start = 0;    // start time in clock ticks since boot (/proc/<pid>/stat field 22)
  std::string pid_namespace;  // "pid:[4026531836]": a container on the same host has its own
};

ProcessStamp ThisProcess();

enum class Liveness { kAlive, kGone, kUnknown };

// The status a reader gives a record that says "running" when its writer is
// gone (metadata.json's status, job.json's job state).
inline constexpr char kEndedWithoutRecord[] = "ended without a record";
// kUnknown when the stamp is of another host or PID namespace (or empty):
// only the host that ran a process, seen from the same namespace, can tell
// whether it still does. A process that exists but whose /proc entry cannot
// be read (hidepid) counts as alive.
Liveness CheckAlive(const ProcessStamp& stamp);

nlohmann::json StampToJson(const ProcessStamp& stamp);
std::optional<ProcessStamp> StampFromJson(const nlohmann::json& json);  // nullopt when absent or malformed

}  // namespace primus
