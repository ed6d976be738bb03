#include "util/process_stamp.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "util/files.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus {
namespace {

// Field 22 of /proc/<pid>/stat: after the command in parentheses (which may
// hold spaces and parentheses itself), the 20th field.
// From /proc/<pid>/stat: the state letter (field 3) and the start time in
// clock ticks since boot (field 22).
struct StatFields {
  char state = '?';
  uint64_t start = 0;
};

std::optional<StatFields> ReadStat(int pid) {
  auto text = ReadRegularFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text.ok()) return std::nullopt;
  size_t close = text->rfind(')');
  if (close == std::string::npos || close + 2 >= text->size()) return std::nullopt;
  std::vector<std::string> fields = Split(std::string_view(*text).substr(close + 2), ' ');
  if (fields.size() < 20 || fields[0].empty()) return std::nullopt;
  auto ticks = ParseInt(fields[19]);
  if (!ticks || *ticks < 0) return std::nullopt;
  return StatFields{fields[0][0], static_cast<uint64_t>(*ticks)};
}

std::optional<uint64_t> StartTicks(int pid) {
  std::optional<StatFields> stat = ReadStat(pid);
  return stat ? std::optional<uint64_t>(stat->start) : std::nullopt;
}

std::string PidNamespace() {
  char target[64] = {};
  ssize_t n = ::readlink("/proc/self/ns/pid", target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

}  // namespace

ProcessStamp ThisProcess() {
  ProcessStamp stamp;
  stamp.host = log::HostName();
  stamp.pid = static_cast<int>(::getpid());
  stamp.start = StartTicks(stamp.pid).value_or(0);
  stamp.pid_namespace = PidNamespace();
  return stamp;
}

Liveness CheckAlive(const ProcessStamp& stamp) {
  if (stamp.pid <= 0 || stamp.host.empty() || stamp.host != log::HostName()) return Liveness::kUnknown;
  if (!stamp.pid_namespace.empty() && stamp.pid_namespace != PidNamespace()) return Liveness::kUnknown;
  if (::kill(stamp.pid, 0) != 0 && errno == ESRCH) return Liveness::kGone;
  // It exists (or we may not signal it: EPERM). A zombie has ended, only
  // its parent has not reaped it yet; a reused pid has another start time.
  std::optional<StatFields> stat = ReadStat(stamp.pid);
  if (!stat) return Liveness::kAlive;
  if (stat->state == 'Z' || stat->state == 'X') return Liveness::kGone;
  if (stamp.start == 0) return Liveness::kAlive;
  return stat->start == stamp.start ? Liveness::kAlive : Liveness::kGone;
}

nlohmann::json StampToJson(const ProcessStamp& stamp) {
  return {{"host", stamp.host}, {"pid", stamp.pid}, {"start", stamp.start}, {"pid_namespace", stamp.pid_namespace}};
}

std::optional<ProcessStamp> StampFromJson(const nlohmann::json& json) {
  std::optional<int> pid = json_fields::IntegerIn(json, "pid", 1, 1 << 30);
  std::string host = json_fields::Text(json, "host");
  if (!pid || host.empty()) return std::nullopt;
  return ProcessStamp{host, *pid, json_fields::Unsigned(json, "start").value_or(0),
                      json_fields::Text(json, "pid_namespace")};
}

}  // namespace primus
