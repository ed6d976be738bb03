// Progress across processes: a benchmark's workers run as children of the
// node agent, whose stderr is not the user's terminal, so one worker (local
// rank 0) writes where it stands to a small file in the run's scratch
// directory and the primus-cli the user started shows it as its progress
// line (util/progress_line.h), following the file on a thread of its own.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace primus::benchmark {

// Replaces `path` with "DONE TOTAL DETAIL"; a failed write is ignored
// (progress is never worth failing a measurement).
void WriteProgressFile(const std::string& path, long done, long total, const std::string& detail);

struct ProgressState {
  long done = 0;
  long total = 0;
  std::string detail;
};
// False when the file is missing or not a progress line yet.
bool ReadProgressFile(const std::string& path, ProgressState* state);

// Shows `path` as the progress line "what n/total detail ..." until it is
// destroyed; does nothing at all when the line would not be shown (stderr
// not a terminal, --quiet).
class ProgressFileWatch {
 public:
  ProgressFileWatch(std::string path, std::string what);
  ~ProgressFileWatch();
  ProgressFileWatch(const ProgressFileWatch&) = delete;
  ProgressFileWatch& operator=(const ProgressFileWatch&) = delete;

 private:
  void Loop();
  std::string path_;
  std::string what_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace primus::benchmark
