// Follows one worker's PRIMUS_METRICS_FILE and keeps its last complete JSON
// line (docs/monitor.md, "Reporting training metrics from any script").
// Each Poll reads only what was appended since the last one, and at most
// kMaxReadBytes of it (a worker that wrote gigabytes costs one bounded read
// of the file's end, not a scan), keeps a partial last line for the next
// Poll (bounded too), skips lines that are not JSON objects, and starts over
// when the file is truncated or replaced (rotated). A missing file is
// normal: the worker has not written yet, or never will.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>

#include "telemetry/node_sample.h"

namespace primus::telemetry {

class MetricsReader {
 public:
  static constexpr size_t kMaxReadBytes = 64 << 10;
  static constexpr size_t kMaxLineBytes = 64 << 10;

  explicit MetricsReader(std::string path) : path_(std::move(path)) {}

  // Reads what is new; returns the latest metrics (with metrics_time, the
  // file's modification time when that line was read), or nullopt when no
  // complete line has been seen yet.
  const std::optional<TrainingMetrics>& Poll();
  const std::optional<TrainingMetrics>& latest() const { return latest_; }
  const std::string& path() const { return path_; }

 private:
  void Consume(std::string_view data, double mtime);

  std::string path_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  off_t offset_ = 0;
  std::string partial_;          // bytes after the last newline read so far
  bool skip_to_newline_ = false; // inside a line that was cut or too long: drop it
  std::optional<TrainingMetrics> latest_;
};

}  // namespace primus::telemetry
