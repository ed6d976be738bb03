#include "agent/printed_metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "util/log.h"

namespace primus::agent {

PrintedMetrics::PrintedMetrics(telemetry::ProgressLineReader reader, std::string metrics_file, int restart_count,
                               int world_size)
    : reader_(std::move(reader)),
      metrics_file_(std::move(metrics_file)),
      restart_count_(restart_count),
      world_size_(world_size) {}

void PrintedMetrics::OnLine(std::string_view line) {
  if (worker_writes_ || failed_) return;
  std::optional<telemetry::TrainingMetrics> metrics = reader_.Read(line);
  if (!metrics) return;
  if (!fd_.valid()) {
    // The agent made the file, but the worker may have replaced it: a link is
    // not followed, and a FIFO neither blocks the open (O_NONBLOCK) nor is
    // written (only a regular file is).
    fd_.Reset(::open(metrics_file_.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat opened {};
    if (fd_.valid() && (::fstat(fd_.get(), &opened) != 0 || !S_ISREG(opened.st_mode))) {
      fd_.Reset();
      errno = EINVAL;
    }
    if (!fd_.valid()) {
      failed_ = true;
      log::Warn("progress read from a worker's output is not recorded: {}: {}", metrics_file_, std::strerror(errno));
      return;
    }
  }
  struct stat info {};
  if (::fstat(fd_.get(), &info) == 0 && info.st_size != appended_) {
    worker_writes_ = true;  // its own lines win
    log::Debug("{} is written by its worker: its printed progress is no longer recorded", metrics_file_);
    return;
  }
  timespec now{}, monotonic{};
  clock_gettime(CLOCK_REALTIME, &now);
  clock_gettime(CLOCK_MONOTONIC, &monotonic);  // intervals: no clock step can fake a straggler
  metrics->time = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
  double seen = static_cast<double>(monotonic.tv_sec) + static_cast<double>(monotonic.tv_nsec) / 1e9;
  // Hugging Face's records are numbered, not stepped: an interval per record
  // would be logging_steps times a step, so none is derived for them.
  bool steps_are_real = reader_.format() != telemetry::ProgressFormat::kHuggingFace;
  if (metrics->step && steps_are_real) {
    if (!metrics->step_time_s && last_step_ && *metrics->step > *last_step_ && seen > last_time_) {
      metrics->step_time_s = (seen - last_time_) / static_cast<double>(*metrics->step - *last_step_);
    }
    last_step_ = metrics->step;
    last_time_ = seen;
  }
  // A line one rank prints for the whole job (Megatron-LM's last rank)
  // carries the per-GPU average: the job view sums ranks, so this rank stands
  // for all of them.
  if (metrics->tokens_per_s && reader_.format() == telemetry::ProgressFormat::kMegatron && world_size_ > 1) {
    *metrics->tokens_per_s *= world_size_;
  }
  metrics->restart_count = restart_count_;
  std::string text = telemetry::MetricsLineJson(*metrics).dump() + "\n";
  if (!io::WriteAll(fd_.get(), text.data(), text.size())) {
    failed_ = true;
    log::Warn("progress read from a worker's output is not recorded: {}: {}", metrics_file_, std::strerror(errno));
    return;
  }
  appended_ += static_cast<off_t>(text.size());
  ++records_;
}

}  // namespace primus::agent
