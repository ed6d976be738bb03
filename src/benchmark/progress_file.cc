#include "benchmark/progress_file.h"

#include <fmt/format.h>

#include <chrono>
#include <sstream>

#include "util/files.h"
#include "util/progress_line.h"
#include "util/thread_signals.h"

namespace primus::benchmark {

void WriteProgressFile(const std::string& path, long done, long total, const std::string& detail) {
  if (path.empty()) return;
  (void)WriteFileAtomic(path, fmt::format("{} {} {}\n", done, total, detail));
}

bool ReadProgressFile(const std::string& path, ProgressState* state) {
  auto text = ReadFile(path);
  if (!text.ok()) return false;
  std::istringstream in(*text);
  ProgressState read;
  if (!(in >> read.done >> read.total) || read.total <= 0) return false;
  std::getline(in >> std::ws, read.detail);
  *state = read;
  return true;
}

ProgressFileWatch::ProgressFileWatch(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  if (ProgressLine::ShouldShow()) thread_ = std::thread([this] { Loop(); });
}

ProgressFileWatch::~ProgressFileWatch() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ProgressFileWatch::Loop() {
  // The node agent takes its signals through a signalfd on the main thread.
  BlockAllSignalsInThisThread();
  ProgressLine line(what_, true);
  ProgressState state;
  while (!stop_) {
    if (ReadProgressFile(path_, &state)) line.Update(state.done, state.total, state.detail);
    for (int i = 0; i < 2 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace primus::benchmark
