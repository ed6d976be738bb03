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

// One failed attempt: its root cause as metadata.json's failures has it, the
// failure signature its message matches, and whether the job restarted.
struct AttemptFailure {
  int attempt = 0;
  nlohmann::ordered_json cause;  // the recorded object (fields as root_cause's)
  std::string signature;         // "gpu-out-of-memory" or ""
  std::string meaning;           // the signature's meaning
  bool restarted = false;        // the job started again after it
};

// A launcher setting the launch ran with, from config/launcher.json.
struct LaunchSetting {
  std::string key;     // "direct.max_restarts"
  std::string value;
  std::string origin;  // "flag --max-restarts", "experiment exp.yaml:6:17", "default", ...
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
  std::vector<AttemptFailure> failures;  // oldest first; empty for a run without failures (or an older record)
  // The launcher settings that shaped the run (nodes, workers, restarts,
  // hang timeout), with their origins; empty when the run has no launcher.json.
  std::vector<LaunchSetting> launch_settings;
  std::string metrics_source;         // "metrics.jsonl", a log file, or "" (none found)
  std::vector<RunPoint> points;
  // Derived from points (0 when there are fewer than two).
  double steps_per_s = 0;
  double tokens_per_s = 0;  // mean over the points that carry it
  double loss_first = 0, loss_last = 0, loss_min = 0;
  int64_t step_last = 0;
};

// The launcher settings of a run directory's config/launcher.json, every key
// (sorted) or only `keys` (in their order); empty when it is missing or
// unreadable. Values and origins are bounded text.
std::vector<LaunchSetting> ReadLaunchSettings(const std::string& dir, const std::vector<std::string>& keys = {});

// A directory without metadata.json is an unavailable error (exit 4).
Result<RunSummary> LoadRunSummary(const std::string& dir);

// metadata.json's root_cause in words: "rank 1 on vm (exit code 1): message", or "none".
std::string DescribeRootCause(const nlohmann::ordered_json& root_cause);
// The run's root cause as the summary and the report say it: the last
// failure's, or, for a run that recovered, that it did and from how many.
std::string DescribeRunRootCause(const RunSummary& summary);
// One failed attempt in words: "attempt 0: rank 1 on vm (exit code 1): boom
// [signature: meaning]; restarted".
std::string DescribeAttemptFailure(const AttemptFailure& failure);
std::string FormatRunSummary(const RunSummary& summary);
// A measured value as the summary and the report print it: 4 significant digits.
std::string FormatMeasure(double value);
std::string RunSummaryJson(const RunSummary& summary);
// Loss and tokens/s against seconds since the first step, one SVG.
std::string RenderRunPlot(const RunSummary& summary);

}  // namespace primus::analyze
