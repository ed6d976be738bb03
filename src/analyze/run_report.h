// Everything the HTML run report (`analyze run --html`) shows, read from an
// experiment directory: the run summary (metadata.json, metrics.jsonl or
// rank 0's log), each rank's step times and where they went (logs/attempt_<n>/
// <host>.rank<R>.metrics.jsonl, docs/monitor.md), each node's CPU and GPU utilization over
// time (logs/telemetry/history.jsonl), the attempts and how every worker
// ended (logs/attempt_<n>/<host>.endings.log and <host>.rank<R>.error.json),
// and the configuration and environment with their origins (config/,
// env/env.json). Each part may be missing; the report says so.
//
// Values are shown as the files hold them: secrets are already redacted
// there, and nothing here can or does restore them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/run_summary.h"
#include "telemetry/step_time_parts.h"
#include "util/svg_chart.h"
#include "util/error.h"

namespace primus::analyze {

// One step's parts on one rank (telemetry/step_time_parts.h).
struct StepParts {
  int attempt = 0;
  int64_t step = 0;
  telemetry::StepTimeBreakdown parts;
};

struct RankStepTimes {
  int rank = 0;
  std::string host;
  std::vector<double> step_time_s;  // in the order written, all attempts
  std::vector<StepParts> parts;     // the steps whose record said where the time went
};

struct NodeHistory {  // x: seconds since the epoch
  int node_rank = 0;
  std::string host;
  std::vector<ChartPoint> cpu_percent;                   // of one core (16 busy cores: 1600)
  std::vector<std::vector<ChartPoint>> gpu_utilization;  // one series per GPU index
};

struct EndingLine {
  std::string host;
  int rank = -1;
  double time = 0;    // seconds since the epoch; 0 when the line has no stamp
  std::string text;   // "ended with exit code 1 (local rank 1, pid 7870)"
  bool failure = false;  // written as an error line (E): not a clean exit, not stopped by the agent
  std::string error_message;  // from the worker's <host>.rank<R>.error.json, when it left one
};

struct AttemptRecord {
  int attempt = 0;
  double start = 0, end = 0;  // seconds since the epoch (first log line, last ending); 0 when unknown
  std::vector<EndingLine> endings;
};

struct OriginEntry {  // a configuration key or an environment variable
  std::string name, value, origin;
};

struct RunReport {
  RunSummary summary;
  nlohmann::ordered_json metadata;   // as metadata.json has it
  std::vector<RankStepTimes> ranks;  // by rank; empty: no per-rank metrics with step_time_s
  std::vector<NodeHistory> nodes;    // by node rank; empty: no telemetry history
  std::vector<AttemptRecord> attempts;
  std::vector<OriginEntry> config;       // resolved.yaml's leaves; empty: none recorded
  // The launcher's settings as the launch ran with them (config/launcher.json,
  // flags and --set included); empty: none recorded (an older run).
  std::vector<OriginEntry> launcher;
  std::vector<OriginEntry> environment;  // env/env.json; empty: none recorded
  std::vector<std::string> notes;        // files that were there but could not be read, one line each
};

// A directory without metadata.json is an unavailable error (exit 4), as
// for LoadRunSummary; every other file is optional.
Result<RunReport> LoadRunReport(const std::string& dir);

}  // namespace primus::analyze
