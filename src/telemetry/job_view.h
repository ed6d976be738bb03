// Node 0's view of the whole job (docs/monitor.md, "The job's view" and
// "History"): the latest sample of every node in, one job view out, with the
// job's step (the lowest any rank reported), the loss of the lowest rank that reports one, the summed
// tokens/s, progress, an ETA from the recent step rate, the median step time
// and the stragglers. Also the compact history line appended at each sample.
// Pure computation: no files, no clock (times are passed in).
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telemetry/node_sample.h"
#include "telemetry/stragglers.h"
#include "util/process_stamp.h"

namespace primus::telemetry {

inline constexpr char kJobViewFormat[] = "primus-job-telemetry/1";

// "starting", "running", "restarting", "succeeded", "failed"
// kStopped: a signal to the agent ended it (Ctrl-C, scancel, primus-cli stop).
enum class JobState { kStarting, kRunning, kRestarting, kSucceeded, kFailed, kStopped };
const char* JobStateName(JobState state);
// Whether a view's state says the job has ended: succeeded, failed,
// stopped, or ended without a record (its agent gone: util/process_stamp.h).
bool IsEndedJobState(std::string_view state);

struct JobInfo {
  std::string run_id;
  std::string coordinator;  // node 0's host
  JobState state = JobState::kStarting;
  int generation = 0;
  int restarts = 0;
  int nnodes = 1;
  int world_size = 1;
  double interval_s = 5;
  // What the job runs, where the launcher knows it (train): "" when not.
  std::string experiment, backend, framework;
  // Where and when the job started, and what its workers run (redacted,
  // shortened), for `primus-cli ps` and for choosing the job a command
  // means when none is named: the agent's working directory.
  double started = 0;
  std::string cwd, command;
  std::optional<ProcessStamp> agent;  // node 0's agent, so a reader can tell it is gone
};

// The figures the job view derives from the ranks' metrics.
struct JobProgress {
  std::optional<int64_t> step, total_steps;
  std::optional<double> progress, eta_s, loss, tokens_per_s, median_step_time_s;
};

class JobAggregator {
 public:
  // One sample of the job at `now` (seconds since the epoch): every node's
  // latest sample, age_s set. Updates the ETA window and the stragglers.
  void Update(const JobInfo& info, std::vector<NodeSample> nodes, double now);

  Json View() const;
  Json HistoryLine() const;
  const JobProgress& progress() const { return progress_; }
  const StragglerWatch& stragglers() const { return stragglers_; }

 private:
  JobInfo info_;
  std::vector<NodeSample> nodes_;
  double time_ = 0;
  JobProgress progress_;
  StragglerWatch stragglers_;
  int watched_generation_ = -1;
  std::deque<std::pair<double, int64_t>> step_window_;  // (time, job step), oldest first
};

}  // namespace primus::telemetry
