// <host>.endings.log in each attempt directory: one line per worker saying
// how and when it ended, as the agent saw it, in the rank logs' own format
// ("2026-11-24T09:19:28.495496 E rank 1: ended with signal 9 (SIGKILL) ...").
// A worker killed by SIGKILL (the OOM killer) writes nothing itself; this file
// is what lets `analyze logs` name it as the first failure afterwards, with
// no access to the agent's console.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::agent {

struct WorkerEnding {
  int rank = 0;
  int local_rank = 0;
  int pid = 0;
  int exit_code = 0;
  int signal = 0;
  bool hung = false;
  bool stopped_by_agent = false;  // ended by the agent's teardown, not by itself
  double ended_at = 0;            // seconds since the epoch
  double hang_timeout_s = 0;
  bool stuck_at_exit = false;  // stopped after the exit grace, its work done (not a failure)
  double exit_grace_s = 0;
  std::string stop_reason = {};  // why the agent stopped it, when the job asked (a failure elsewhere, a lost node)
};

// The file's text, one line per worker, in the order given.
std::string FormatEndings(const std::vector<WorkerEnding>& endings);

Status WriteEndingsLog(const std::string& path, const std::vector<WorkerEnding>& endings);

// Adds "<stamp> E node <host>: excluded from the job: <why>" to the log
// (direct.exclude_bad_nodes), after the workers' lines.
Status AppendNodeExclusion(const std::string& path, const std::string& host, const std::string& why, double when);

}  // namespace primus::agent
