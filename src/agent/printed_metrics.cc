#include "agent/printed_metrics.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "util/clock.h"
#include "util/log.h"
#include "util/private_files.h"

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
  // A timer block this line ended belongs to the step before the line's.
  if (std::optional<telemetry::TrainingMetrics> block = reader_.TakeBlockRecord()) Record(std::move(*block));
  if (metrics) Record(std::move(*metrics));
}

void PrintedMetrics::OnOutputPaused() {
  if (worker_writes_ || failed_) return;
  if (std::optional<telemetry::TrainingMetrics> block = reader_.TakeBlockRecord(/*output_paused=*/true)) {
    Record(std::move(*block));
  }
}

void PrintedMetrics::Record(telemetry::TrainingMetrics record) {
  if (worker_writes_ || failed_) return;
  telemetry::TrainingMetrics* metrics = &record;
  if (!fd_.valid()) {
    // The agent made the file, but the worker may have replaced it: a link,
    // a FIFO or another user's file is refused (util/private_files.h).
    auto fd = OpenPrivateFileForAppend(metrics_file_);
    if (!fd.ok()) {
      failed_ = true;
      log::Warn("progress read from a worker's output is not recorded: {}", fd.error().message);
      return;
    }
    fd_.Reset(*fd);
  }
  struct stat info {};
  if (::fstat(fd_.get(), &info) == 0 && info.st_size != appended_) {
    worker_writes_ = true;  // its own lines win
    log::Debug("{} is written by its worker: its printed progress is no longer recorded", metrics_file_);
    return;
  }
  metrics->time = WallSeconds();
  double seen = MonotonicSeconds();  // intervals: no clock step can fake a straggler
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
