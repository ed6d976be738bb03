// Follows a run's progress while the agent runs the workers, and shows it: on
// a terminal a line redrawn in place (step/total, loss, tokens/s, ETA),
// otherwise a log line every `interval_s`. It reads on its own thread, so the
// agent's event loop is untouched, one of two sources:
//   - kMetricsLines: rank 0's metrics (JSON lines the trainer appends);
//   - kJobView: the job's view node 0's agent rewrites each telemetry
//     interval (<log dir>/telemetry/job.json, docs/monitor.md), for a
//     framework whose progress the agent reads from its output (Megatron-LM
//     prints on its last rank, TorchTitan through its logger).
#pragma once

#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <string>
#include <thread>

namespace primus::train {

struct ProgressSnapshot {
  long step = 0;
  double loss = 0;
  double tokens_per_s = 0;
  double elapsed_s = 0;
  long total_steps = 0;  // when the source says (a job view); else the caller's
  double eta_s = -1;     // when the source estimated it (a job view); else from elapsed_s
};

// The job view's figures (job.step, total_steps, loss, tokens_per_s, eta_s);
// false when it has no step yet or is not a view.
bool ReadJobViewProgress(const std::string& text, ProgressSnapshot* snapshot);

// Parses one metrics line; false when it is not one.
bool ParseMetricsLine(const std::string& line, ProgressSnapshot* snapshot);
std::string FormatProgress(const ProgressSnapshot& snapshot, long total_steps);

class ProgressFollower {
 public:
  enum class Source { kMetricsLines, kJobView };
  ProgressFollower(std::string metrics_file, long total_steps, bool terminal, double interval_s,
                   Source source = Source::kMetricsLines);
  ~ProgressFollower();  // stops and joins
  void Stop();

 private:
  void Loop();
  std::string metrics_file_;
  Source source_;
  ino_t view_inode_ = 0;  // kJobView: the version of the file read last
  timespec view_mtime_{};
  long total_steps_;
  bool terminal_;
  double interval_s_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace primus::train
