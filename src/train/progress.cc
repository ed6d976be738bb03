#include "train/progress.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "telemetry/node_sample.h"
#include "util/files.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/progress_line.h"
#include "util/thread_signals.h"

namespace primus::train {

bool ParseMetricsLine(const std::string& line, ProgressSnapshot* snapshot) {
  std::optional<telemetry::TrainingMetrics> metrics = telemetry::ParseMetricsLine(line);
  if (!metrics || !metrics->step) return false;
  // A field that is null or odd keeps the last known value.
  snapshot->step = static_cast<long>(*metrics->step);
  snapshot->loss = metrics->loss.value_or(snapshot->loss);
  snapshot->tokens_per_s = metrics->tokens_per_s.value_or(snapshot->tokens_per_s);
  snapshot->elapsed_s = metrics->elapsed_s.value_or(snapshot->elapsed_s);
  return true;
}

bool ReadJobViewProgress(const std::string& text, ProgressSnapshot* snapshot) {
  std::optional<json_fields::Json> view = json_fields::ParseObject(text, 16 << 20);
  if (!view) return false;
  const json_fields::Json& job = json_fields::Object(*view, "job");
  std::optional<int64_t> step = json_fields::Integer(job, "step");
  if (!step) return false;
  snapshot->step = static_cast<long>(*step);
  snapshot->loss = json_fields::Number(job, "loss").value_or(snapshot->loss);
  snapshot->tokens_per_s = json_fields::Number(job, "tokens_per_s").value_or(snapshot->tokens_per_s);
  snapshot->total_steps = static_cast<long>(json_fields::Integer(job, "total_steps").value_or(snapshot->total_steps));
  snapshot->eta_s = json_fields::Number(job, "eta_s").value_or(-1);
  return true;
}

std::string FormatProgress(const ProgressSnapshot& s, long total_steps) {
  if (total_steps <= 0) total_steps = s.total_steps;
  std::string eta = "-";
  if (s.eta_s >= 0) {
    eta = FormatClock(s.eta_s);
  } else if (s.step > 0 && total_steps > s.step && s.elapsed_s > 0) {
    eta = FormatClock(s.elapsed_s / static_cast<double>(s.step) * static_cast<double>(total_steps - s.step));
  }
  // A worker's numbers: any size (in double, clamped), never an overflow.
  int percent = total_steps > 0
                    ? static_cast<int>(std::clamp(100.0 * static_cast<double>(s.step) / static_cast<double>(total_steps),
                                                  0.0, 100.0))
                    : 0;
  return fmt::format("step {}/{} ({}%)  loss {:.4f}  {:.0f} tok/s  ETA {}", s.step, total_steps, percent, s.loss,
                     s.tokens_per_s, eta);
}

ProgressFollower::ProgressFollower(std::string metrics_file, long total_steps, bool terminal, double interval_s,
                                   Source source)
    : metrics_file_(std::move(metrics_file)),
      source_(source),
      total_steps_(total_steps),
      terminal_(terminal),
      interval_s_(interval_s) {
  thread_ = std::thread([this] { Loop(); });
}

ProgressFollower::~ProgressFollower() { Stop(); }

void ProgressFollower::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ProgressFollower::Loop() {
  // The node agent takes its signals through a signalfd on the main thread.
  BlockAllSignalsInThisThread();
  std::ifstream in;
  std::string partial;
  ProgressSnapshot latest;
  bool have = false;
  auto last_report = std::chrono::steady_clock::now();
  ProgressLine line("", terminal_);
  while (!stop_) {
    if (source_ == Source::kJobView) {
      // Rewritten whole (renamed into place) each interval: read it whole, and
      // only when it was (its inode or modification time changed).
      struct stat info {};
      if (::stat(metrics_file_.c_str(), &info) == 0 &&
          (info.st_ino != view_inode_ || info.st_mtim.tv_sec != view_mtime_.tv_sec ||
           info.st_mtim.tv_nsec != view_mtime_.tv_nsec)) {
        view_inode_ = info.st_ino;
        view_mtime_ = info.st_mtim;
        Result<std::string> text = ReadFile(metrics_file_);
        if (text.ok() && ReadJobViewProgress(*text, &latest)) have = true;
      }
    } else if (!in.is_open()) {
      in.open(metrics_file_);
    }
    if (source_ == Source::kMetricsLines && in.is_open()) {
      std::string line;
      while (std::getline(in, line)) {
        if (in.eof()) {  // no newline yet: keep it for the next read (bounded)
          if (partial.size() < (64 << 10)) partial += line;
          break;
        }
        line = partial + line;
        partial.clear();
        if (line.size() > (64 << 10)) continue;  // not a metrics line; never held without bound
        if (ParseMetricsLine(line, &latest)) have = true;
      }
      in.clear();
    }
    auto now = std::chrono::steady_clock::now();
    double since = std::chrono::duration<double>(now - last_report).count();
    if (have && (terminal_ ? since >= 0.5 : since >= interval_s_)) {
      if (terminal_) {
        line.Show(FormatProgress(latest, total_steps_));
      } else {
        log::Info("progress: {}", FormatProgress(latest, total_steps_));
      }
      last_report = now;
    }
    for (int i = 0; i < 5 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace primus::train
