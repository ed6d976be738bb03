// Follows rank 0's metrics (JSON lines written by the trainer) while the
// agent runs the workers, and shows progress: on a terminal a line redrawn
// in place (step/total, loss, tokens/s, ETA), otherwise a log line every
// `interval_s`. It reads a file the trainer appends to, on its own thread, so
// the agent's event loop is untouched.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace primus::train {

struct ProgressSnapshot {
  long step = 0;
  double loss = 0;
  double tokens_per_s = 0;
  double elapsed_s = 0;
};

// Parses one metrics line; false when it is not one.
bool ParseMetricsLine(const std::string& line, ProgressSnapshot* snapshot);
std::string FormatProgress(const ProgressSnapshot& snapshot, long total_steps);

class ProgressFollower {
 public:
  ProgressFollower(std::string metrics_file, long total_steps, bool terminal, double interval_s);
  ~ProgressFollower();  // stops and joins
  void Stop();

 private:
  void Loop();
  std::string metrics_file_;
  long total_steps_;
  bool terminal_;
  double interval_s_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace primus::train
