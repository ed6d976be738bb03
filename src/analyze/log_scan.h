// Reading a job's logs against the signature database: which files belong
// to the run (an experiment directory, a log directory, or files named one
// by one), which known failures they hold (first occurrence, repeats
// grouped), what error-looking lines no signature explains, and which rank
// failed first in each attempt, by timestamp across every file.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyze/signature_db.h"
#include "util/error.h"

namespace primus::analyze {

// One log file and what its name and place say about it:
// <dir>/attempt_<A>/<host>.rank<R>.log (a worker's log), <host>.endings.log
// (how the agent saw each worker end), anything else (*.log, *.out:
// ranks come from "[host:rank]" line prefixes when present).
struct LogSource {
  std::string path;
  std::string display;  // the path relative to what the user named
  std::string host;
  int rank = -1;
  int attempt = -1;
};

// Expands experiment/log directories (recursively: *.log, *.out, *.err,
// *.txt) and takes files as they are. A path that does not exist is an
// unavailable error (exit 4) naming it.
Result<std::vector<LogSource>> FindLogSources(const std::vector<std::string>& paths);

struct Occurrence {
  std::string file;  // LogSource::display
  size_t line = 0;   // 1-based
  std::string host;
  int rank = -1;
  int attempt = -1;
  double time = 0;   // 0: the line carries no time
  std::string text;
};

struct SignatureHit {
  int signature = 0;  // index into SignatureDb::signatures()
  Occurrence first;
  size_t count = 0;
  std::vector<int> ranks;  // sorted, distinct; -1 never appears
  std::vector<std::string> hosts;
};

struct FirstFailure {
  int attempt = -1;
  Occurrence where;
  int signature = -1;  // -1: an error-looking line no signature explains
};

struct LogScan {
  size_t files = 0;
  size_t lines = 0;
  std::vector<SignatureHit> hits;          // by time of first occurrence
  std::vector<Occurrence> unrecognised;    // error-looking lines: the first few per rank, none for ranks with a hit
  std::vector<FirstFailure> first_failures;  // one per attempt that failed, by attempt
};

// `on_file` (optional) is called before each file and once at the end with
// the files read so far, the files in all and the next file's path.
using ScanProgress = std::function<void(size_t done, size_t total, const std::string& next)>;
LogScan ScanLogs(const std::vector<LogSource>& sources, const SignatureDb& db, const ScanProgress& on_file = {});

}  // namespace primus::analyze
