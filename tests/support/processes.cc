#include "processes.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

bool IsZombie(const std::string& stat) {
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

}  // namespace

bool ProcessAlive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  return stat.ok() && !IsZombie(*stat);
}

std::vector<pid_t> ProcessesWithMarker(const std::string& marker, const std::string& comm) {
  std::vector<pid_t> found;
  std::string needle = "PRIMUS_TEST_MARKER=" + marker + '\0';
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    auto pid = ParseInt(entry->d_name);
    if (!pid || *pid == getpid()) continue;
    std::string base = std::string("/proc/") + entry->d_name;
    auto environ_text = ReadFile(base + "/environ");
    if (!environ_text.ok() || environ_text->find(needle) == std::string::npos) continue;
    auto stat = ReadFile(base + "/stat");
    if (!stat.ok() || IsZombie(*stat)) continue;
    if (!comm.empty()) {
      auto name = ReadFile(base + "/comm");
      if (!name.ok() || Trim(*name) != comm) continue;
    }
    found.push_back(static_cast<pid_t>(*pid));
  }
  closedir(proc);
  return found;
}

}  // namespace primus::testing
