// A worker's progress read from what it prints (telemetry/progress_line.h),
// turned into the metrics stream PRIMUS_METRICS_FILE feeds: each progress
// line becomes one JSON line appended to the worker's metrics file, so that
// the job view, `monitor`, /metrics, stragglers and `analyze` see a
// Megatron-LM or TorchTitan job as they see a worker that writes the file
// itself. A worker that does write its metrics file wins: once the file holds
// bytes this reader did not append, it stops for that worker. A format that
// prints no step time (TorchTitan, Hugging Face) gets one from the interval
// between two progress lines, per step, so stragglers show for it too.
// Megatron-LM's timer block, when it prints one, comes as a second record of
// the same step carrying its parts (time_parts); readers take the later one.
// (A worker that starts writing its file after a printed line was recorded
// leaves that one record beside its own: readers take the latest line.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/unique_fd.h"
#include "telemetry/progress_line.h"

namespace primus::agent {

class PrintedMetrics {
 public:
  // `metrics_file`: the worker's file, which the agent created empty.
  // `world_size`: the job's workers (a Megatron line's tokens/s/GPU is per GPU).
  PrintedMetrics(telemetry::ProgressLineReader reader, std::string metrics_file, int restart_count,
                 int world_size = 1);

  // One line of the worker's stdout or stderr, without its line end.
  void OnLine(std::string_view line);
  // The output read so far is all there is for now: a block of lines
  // (Megatron's timers) that nothing has ended yet is recorded.
  void OnOutputPaused();

  // Lines turned into records so far; whether the worker writes the file itself.
  long records() const { return records_; }
  bool worker_writes_file() const { return worker_writes_; }
  // The step of the newest progress line read; nullopt before the first.
  std::optional<int64_t> last_step() const { return last_step_; }

 private:
  // Appends one record to the metrics file (step time from the interval where needed).
  void Record(telemetry::TrainingMetrics record);

  telemetry::ProgressLineReader reader_;
  std::string metrics_file_;
  int restart_count_;
  int world_size_;
  io::UniqueFd fd_;
  off_t appended_ = 0;  // bytes this reader wrote
  long records_ = 0;
  std::optional<int64_t> last_step_;  // the previous record's step and when it was read (monotonic)
  double last_time_ = 0;
  bool worker_writes_ = false;
  bool failed_ = false;  // the file could not be opened or written: said once
};

}  // namespace primus::agent
