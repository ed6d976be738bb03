#include "util/process_stamp.h"

#include <unistd.h>

#include "util/files.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus {
namespace {

// Field 22 of /proc/<pid>/stat: after the command in parentheses (which may
// hold spaces and parentheses itself), the 20th field.
std::optional<uint64_t> StartTicks(int pid) {
  auto text = ReadRegularFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text.ok()) return std::nullopt;
  size_t close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::vector<std::string> fields = Split(std::string_view(*text).substr(close + 2), ' ');
  if (fields.size() < 20) return std::nullopt;
  auto ticks = ParseInt(fields[19]);
  if (!ticks || *ticks < 0) return std::nullopt;
  return static_cast<uint64_t>(*ticks);
}

}  // namespace

ProcessStamp ThisProcess() {
  ProcessStamp stamp;
  stamp.host = log::HostName();
  stamp.pid = static_cast<int>(::getpid());
  stamp.start = StartTicks(stamp.pid).value_or(0);
  return stamp;
}

Liveness CheckAlive(const ProcessStamp& stamp) {
  if (stamp.pid <= 0 || stamp.host.empty() || stamp.host != log::HostName()) return Liveness::kUnknown;
  std::optional<uint64_t> start = StartTicks(stamp.pid);
  if (!start) return Liveness::kGone;
  return stamp.start == 0 || *start == stamp.start ? Liveness::kAlive : Liveness::kGone;
}

nlohmann::json StampToJson(const ProcessStamp& stamp) {
  return {{"host", stamp.host}, {"pid", stamp.pid}, {"start", stamp.start}};
}

std::optional<ProcessStamp> StampFromJson(const nlohmann::json& json) {
  std::optional<int> pid = json_fields::IntegerIn(json, "pid", 1, 1 << 30);
  std::string host = json_fields::Text(json, "host");
  if (!pid || host.empty()) return std::nullopt;
  return ProcessStamp{host, *pid, json_fields::Unsigned(json, "start").value_or(0)};
}

}  // namespace primus
