// Helpers shared by the agent's process-level tests: a temporary log
// directory, a LaunchSpec running a shell script per rank, reading a rank's
// log, and the pids a script wrote down; the helpers every test shares come
// from tests/support.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "agent/launch_spec.h"
#include "free_port.h"
#include "processes.h"
#include "text.h"
#include "wait_for.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::agent::testing {

inline std::string MakeTempDir(const char* tag) {
  std::string pattern = std::string("/tmp/primus-") + tag + "-XXXXXX";
  return mkdtemp(pattern.data());
}

using primus::ScopedTempDir;  // util/scoped_temp_dir.h
// tests/support: one definition each for every test.
using primus::testing::Contains;
using primus::testing::FreePort;
using primus::testing::ProcessAlive;
using primus::testing::WaitFor;


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

inline std::vector<pid_t> PidsInFile(const std::string& path) {
  std::vector<pid_t> pids;
  auto text = ReadFile(path);
  if (!text.ok()) return pids;
  for (const std::string& word : Split(*text, '\n')) {
    if (auto pid = ParseInt(Trim(word))) pids.push_back(static_cast<pid_t>(*pid));
  }
  return pids;
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
