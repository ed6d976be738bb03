// `analyze hang RUN`: the verdict on a hung run, after the fact, from what
// its ranks left in the attempt's directory: the stacks the agent took
// (<host>.rank<R>.stacks.txt, else the dumper's <host>.rank<R>.pystacks.txt)
// and the NCCL flight recorder's dumps (nccl_trace_rank_<R>, pickle or JSON),
// of every host whose files are there (a shared file system, or copied in).
// The same judgement as the agent's banner (analyze/hang_culprit.h), across
// all the hosts at once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/hang_culprit.h"
#include "util/error.h"

namespace primus::analyze {

struct HangReport {
  std::string attempt_dir;
  int attempt = -1;          // -1: the directory named was the attempt's own
  HangVerdict verdict;
  size_t stack_files = 0;    // files read, of each kind
  size_t flight_dumps = 0;
  std::vector<std::string> notes;  // files that were there but could not be read, one line each
};

// `run`: an experiment directory (its metadata.json names the logs), a log
// directory (attempt_<n>/ under it) or an attempt directory. `attempt`: which
// one; by default the latest that has stacks or flight recorder dumps. An
// unavailable error (exit 4) when there is no such evidence.
Result<HangReport> LoadHangReport(const std::string& run, std::optional<int> attempt = std::nullopt);

std::string FormatHangReport(const HangReport& report);
std::string HangReportJson(const HangReport& report);

}  // namespace primus::analyze
