// Which failure is the root cause, and the banner that tells the user.
//
// The root cause is the earliest failure: the timestamp in the worker's error
// file when it wrote one (the moment the exception was recorded), else the
// moment the agent saw the worker end. So a rank that raised first but took
// long to exit still wins over a peer that crashed quickly because of it.
// The banner names host, rank, local rank, pid, exit code or signal, the error
// file's message and traceback, and the last lines of that rank's log, then
// lists the other failures and the ranks the agent stopped.
#pragma once

#include <string>
#include <vector>

#include "agent/launch_spec.h"
#include "analyze/hang_culprit.h"

namespace primus::agent {

// Whether `a` failed before `b`. PyTorch's @record writes whole seconds, so
// timestamps are compared to the second, and failures within the same
// second are ordered by when the agent saw them end: the rank that raised
// first beats the peer that died of "Connection closed by peer" a moment
// later.
bool FailedBefore(const WorkerFailure& a, const WorkerFailure& b);

// Index of the earliest failure by FailedBefore. `failures` must not be empty.
size_t ChooseRootCause(const std::vector<WorkerFailure>& failures);

// A hang: the rank the others wait for (analyze/hang_culprit.h) is the root
// cause, not the first of its victims the watchdog saw go silent; when it is
// among `others`, it changes places with `root`. When its own node saw no
// failure of it (node 0 stopped that node before its watchdog fired), one is
// made from `place` (its host and local rank; no pid) and `root` joins
// `others`; without a place, nothing changes.
void PreferRankAsRootCause(int rank, const analyze::RankPlace* place, std::optional<WorkerFailure>* root,
                           std::vector<WorkerFailure>* others);

// "exit code 3", "signal 11 (SIGSEGV)".
std::string DescribeEnding(int exit_code, int signal);

// "2026-11-22T10:00:00.123456" (local time) for seconds since the epoch.
std::string FormatTimestamp(double seconds);

// The last `count` lines of a text file (bounded read of its end).
std::vector<std::string> LastLines(const std::string& path, size_t count);

struct BannerInput {
  WorkerFailure root_cause;
  std::vector<WorkerFailure> other_failures;
  std::vector<int> stopped_ranks;  // ended by the agent's teardown
  double hang_timeout_s = 0;
  size_t tail_lines = 20;
  // A hang: which rank the others wait for, from their stacks
  // (analyze/hang_culprit.h); "" when no stacks were judged.
  std::string hang_verdict;
  std::vector<std::string> hang_details;  // one line per culprit: host, local rank, last step, frame
};

// The multi-line banner (no log prefix; ends with a newline).
std::string FormatFailureBanner(const BannerInput& input);

}  // namespace primus::agent
