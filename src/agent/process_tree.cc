#include "agent/process_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "util/files.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

int g_previous_subreaper = -1;

// State and process group from /proc/<pid>/stat ("pid (comm) S ppid pgrp ...";
// comm may hold spaces and parentheses, so parse from the last ')').
bool ReadStat(pid_t pid, char* state, pid_t* process_group) {
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return false;
  const std::string& text = *stat;
  size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  const char* cursor = text.c_str() + close + 2;
  *state = *cursor;
  char* end;
  std::strtol(cursor + 1, &end, 10);  // ppid
  *process_group = static_cast<pid_t>(std::strtol(end, &end, 10));
  return true;
}

void AppendChildren(pid_t pid, std::vector<pid_t>* children) {
  std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    auto text = ReadFile(task_dir + "/" + entry->d_name + "/children");
    if (!text.ok()) continue;
    const char* cursor = text->c_str();
    char* end;
    while (true) {
      long child = std::strtol(cursor, &end, 10);
      if (end == cursor) break;
      children->push_back(static_cast<pid_t>(child));
      cursor = end;
    }
  }
  ::closedir(dir);
}

}  // namespace

Status BecomeSubreaper() {
  int previous = 0;
  if (prctl(PR_GET_CHILD_SUBREAPER, &previous) == 0) g_previous_subreaper = previous;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return UnavailableError(std::string("cannot become a child subreaper: ") + std::strerror(errno));
  }
  return Status::Ok();
}

void RestoreSubreaper() {
  if (g_previous_subreaper == 0) prctl(PR_SET_CHILD_SUBREAPER, 0);
  g_previous_subreaper = -1;
}

std::string ProcessStatusValue(pid_t pid, std::string_view name) {
  auto status = ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!status.ok()) return "";
  std::string key = "\n" + std::string(name) + ":";
  size_t at = status->starts_with(key.substr(1)) ? 0 : status->find(key);
  if (at == std::string::npos) return "";
  at = status->find(':', at) + 1;
  return std::string(Trim(std::string_view(*status).substr(at, status->find('\n', at) - at)));
}

std::vector<ProcessInfo> ListDescendants(pid_t root) {
  std::vector<ProcessInfo> found;
  std::vector<pid_t> frontier;
  AppendChildren(root, &frontier);
  for (size_t i = 0; i < frontier.size() && i < 100000; ++i) {
    pid_t pid = frontier[i];
    char state = 0;
    pid_t group = 0;
    if (!ReadStat(pid, &state, &group)) continue;  // gone meanwhile
    if (state != 'Z' && state != 'X') found.push_back({pid, group});
    AppendChildren(pid, &frontier);
  }
  return found;
}

bool IsOurAgent(pid_t pid) {
  if (pid <= 1) return false;
  auto uid = ParseInt(Split(ProcessStatusValue(pid, "Uid"), '\t').front());
  if (!uid || *uid != static_cast<int64_t>(::getuid())) return false;
  char exe[4096] = {}, self[4096] = {};
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), exe, sizeof(exe) - 1);
  ssize_t m = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return false;
  std::string path(exe, static_cast<size_t>(n));
  return (m > 0 && path == std::string(self, static_cast<size_t>(m))) || path.ends_with("/primus-cli");
}

int SignalAll(const std::vector<ProcessInfo>& processes, int signal) {
  int signalled = 0;
  for (const ProcessInfo& process : processes) {
    if (::kill(process.pid, signal) == 0) ++signalled;
  }
  return signalled;
}

}  // namespace primus::agent
