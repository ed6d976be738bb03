// The `info` task: what the tool sees on this host, in one screen (or JSON).
// This first version reports the host itself; GPUs, NICs, NUMA and the
// profile chain join it with the platform layer (issue #4).
#include <sys/utsname.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "tasks/task.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

// The value of `key` in a "key: value" or KEY="value" file, or "".
std::string FieldOf(const std::string& path, const std::string& key, char separator) {
  auto content = ReadFile(path);
  if (!content.ok()) return "";
  for (const std::string& line : Split(*content, '\n')) {
    size_t at = line.find(separator);
    if (at == std::string::npos || Trim(line.substr(0, at)) != key) continue;
    std::string value(Trim(line.substr(at + 1)));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

class InfoTask : public Task {
 public:
  std::string name() const override { return "info"; }
  std::string summary() const override { return "show what primus-cli sees on this host"; }
  std::string help() const override {
    return "usage: primus-cli [global options] [direct --] info [--json]\n"
           "\n"
           "Host, operating system, kernel, CPUs and memory as primus-cli detects them.\n";
  }

  Result<int> Run(const TaskContext& context) override {
    bool as_json = false;
    for (const std::string& arg : context.args) {
      if (arg == "--json") as_json = true;
      else return UsageError("unknown argument '" + arg + "' for task 'info'", "usage: info [--json]");
    }
    if (context.dry_run) return 0;

    utsname uts{};
    uname(&uts);
    nlohmann::ordered_json info;
    info["version"] = PRIMUS_VERSION;
    info["host"] = log::HostName();
    info["os"] = FieldOf("/etc/os-release", "PRETTY_NAME", '=');
    info["kernel"] = std::string(uts.release);
    info["arch"] = std::string(uts.machine);
    info["cpus"] = sysconf(_SC_NPROCESSORS_ONLN);
    std::string memory = FieldOf("/proc/meminfo", "MemTotal", ':');  // "24634548 kB"
    info["memory_bytes"] = ParseInt(Split(memory, ' ')[0]).value_or(0) * 1024;

    if (as_json) {
      std::cout << info.dump(2) << "\n";
      return 0;
    }
    std::cout << "primus-cli " << PRIMUS_VERSION << "\n"
              << "host      " << info["host"].get<std::string>() << "\n"
              << "os        " << info["os"].get<std::string>() << "\n"
              << "kernel    " << info["kernel"].get<std::string>() << " (" << info["arch"].get<std::string>() << ")\n"
              << "cpus      " << info["cpus"].get<long>() << "\n"
              << "memory    " << info["memory_bytes"].get<int64_t>() / (1024 * 1024 * 1024) << " GiB\n";
    return 0;
  }
};

TaskRegistration<InfoTask> registration;

}  // namespace
}  // namespace primus::tasks
