#include "agent/printed_metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "util/log.h"

namespace primus::agent {

PrintedMetrics::PrintedMetrics(telemetry::ProgressLineReader reader, std::string metrics_file, int restart_count)
    : reader_(std::move(reader)), metrics_file_(std::move(metrics_file)), restart_count_(restart_count) {}

void PrintedMetrics::OnLine(std::string_view line) {
  if (worker_writes_ || failed_) return;
  std::optional<telemetry::TrainingMetrics> metrics = reader_.Read(line);
  if (!metrics) return;
  if (!fd_.valid()) {
    // The agent made the file; a link planted in its place is not followed.
    fd_.Reset(::open(metrics_file_.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
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
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  metrics->time = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
  if (metrics->step) {
    if (!metrics->step_time_s && last_step_ && *metrics->step > *last_step_ && *metrics->time > last_time_) {
      metrics->step_time_s = (*metrics->time - last_time_) / static_cast<double>(*metrics->step - *last_step_);
    }
    last_step_ = metrics->step;
    last_time_ = *metrics->time;
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
