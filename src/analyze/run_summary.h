// `analyze run <experiment-dir>`: what a training run did, from the files
// train leaves behind: metadata.json (times, status, restarts, root cause)
// and metrics.jsonl (one JSON line per step from rank 0: step, loss,
// tokens_per_s, time), or, without metrics, rank 0's "step N/M loss X ...
// tok/s Y" log lines. Steps/s counts only forward progress, so steps redone
// after a restart are not counted twice.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace primus::analyze {

struct RunPoint {
  double time = 0;  // seconds since the epoch
  int64_t step = 0;
  double loss = 0;
  double tokens_per_s = 0;  // 0 when unknown
  int attempt = 0;          // metrics.jsonl's restart_count, or the log's attempt_<n>
};

struct RunSummary {
  std::string dir;
  std::string log_dir;  // the run's own (metadata.json's log_dir when it is a directory, else dir/logs)
  std::string task;
  std::string status;  // "succeeded", "failed", "running", ...
  int exit_code = 0;
  int restarts = 0;
  std::string start_time, end_time;  // as metadata.json has them
  double start_s = 0;                // start_time in seconds since the epoch; 0 when unknown
  double duration_s = 0;             // 0 when unknown (still running)
  nlohmann::ordered_json root_cause;  // null when none
  std::string metrics_source;         // "metrics.jsonl", a log file, or "" (none found)
  std::vector<RunPoint> points;
  // Derived from points (0 when there are fewer than two).
  double steps_per_s = 0;
  double tokens_per_s = 0;  // mean over the points that carry it
  double loss_first = 0, loss_last = 0, loss_min = 0;
  int64_t step_last = 0;
};

// A directory without metadata.json is an unavailable error (exit 4).
Result<RunSummary> LoadRunSummary(const std::string& dir);

// metadata.json's root_cause in words: "rank 1 on vm (exit code 1): message", or "none".
std::string DescribeRootCause(const nlohmann::ordered_json& root_cause);
std::string FormatRunSummary(const RunSummary& summary);
// A measured value as the summary and the report print it: 4 significant digits.
std::string FormatMeasure(double value);
std::string RunSummaryJson(const RunSummary& summary);
// Loss and tokens/s against seconds since the first step, one SVG.
std::string RenderRunPlot(const RunSummary& summary);

}  // namespace primus::analyze
