// Helpers shared by the agent's process-level tests: a temporary log
// directory, a LaunchSpec running a shell script per rank, reading a rank's
// log, and checking that a pid is really gone.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "agent/launch_spec.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::agent::testing {

inline std::string MakeTempDir(const char* tag) {
  std::string pattern = std::string("/tmp/primus-") + tag + "-XXXXXX";
  return mkdtemp(pattern.data());
}

using primus::ScopedTempDir;  // util/scoped_temp_dir.h


// `script` runs as `sh -c script` in every rank.
inline LaunchSpec ShellSpec(int nproc, const std::string& script, const std::string& log_dir) {
  LaunchSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.nproc_per_node = nproc;
  spec.log_dir = log_dir;
  spec.term_timeout_s = 5;
  spec.restart_backoff_s = 0.01;
  return spec;
}

inline std::string RankLogPath(const RunResult& result, int attempt, int rank) {
  return result.log_dir + "/attempt_" + std::to_string(attempt) + "/" + [] {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    std::string name(host);
    return name.substr(0, name.find('.'));
  }() + ".rank" + std::to_string(rank) + ".log";
}

inline std::string RankLog(const RunResult& result, int attempt, int rank) {
  auto text = ReadFile(RankLogPath(result, attempt, rank));
  return text.ok() ? *text : "<missing " + RankLogPath(result, attempt, rank) + ">";
}

// Alive and not a zombie.
inline bool ProcessAlive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return false;
  size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] != 'Z';
}

inline std::vector<pid_t> PidsInFile(const std::string& path) {
  std::vector<pid_t> pids;
  auto text = ReadFile(path);
  if (!text.ok()) return pids;
  for (const std::string& word : Split(*text, '\n')) {
    if (auto pid = ParseInt(Trim(word))) pids.push_back(static_cast<pid_t>(*pid));
  }
  return pids;
}

// A TCP port the kernel picks on the IPv6 wildcard (so IPv4 too), released
// again, for a test that needs a free one.
inline int FreePort() {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  socklen_t length = sizeof(address);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin6_port);
  }
  ::close(fd);
  return port;
}

inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Polls `done` every 10 ms until it is true or `timeout_s` passed.
template <typename Predicate>
bool WaitFor(Predicate done, double timeout_s) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    ::usleep(10000);
  }
  return true;
}

class Stopwatch {
 public:
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace primus::agent::testing
