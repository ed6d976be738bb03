// The job's view, as node 0 publishes it each telemetry interval, turned into
// TensorBoard scalars (tensorboard_writer.h): one run directory per attempt
// (generation) under the TensorBoard directory, so a restart shows as a new
// run; `tensorboard --logdir <dir>` then follows the job live.
//
//   train/...   at the training step, written when the step moves on: loss,
//               tokens_per_s (the job's), progress, step_time_s (the median),
//               and, from the lowest rank that reports them, lr, grad_norm,
//               loss_scale, tflops_per_gpu, mfu, samples_per_s
//   system/...  at the sample's number, at most every 30 s: per node
//               cpu_cores and memory_used_bytes; per GPU utilization (0-1),
//               memory_used_bytes and power_watts
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/tensorboard_writer.h"

namespace primus::telemetry {

using Scalars = std::vector<std::pair<std::string, float>>;

// The view's training scalars and its step (nullopt: no step yet).
std::pair<std::optional<int64_t>, Scalars> TrainingScalars(const nlohmann::json& view);
// The view's node and GPU scalars.
Scalars SystemScalars(const nlohmann::json& view);

class TensorBoardFeed {
 public:
  TensorBoardFeed(std::string dir, std::string host) : dir_(std::move(dir)), host_(std::move(host)) {}

  // Writes what is new in `view`; the first call of a generation opens its
  // run (`<dir>/attempt_<generation>`). A failure is said once; the job goes on.
  void Publish(const nlohmann::json& view, int generation, double wall_time);

 private:
  std::string dir_;
  std::string host_;
  std::optional<TensorBoardWriter> writer_;
  int generation_ = -1;
  static constexpr double kSystemIntervalS = 30;
  std::optional<int64_t> last_step_;
  int64_t samples_ = 0;
  double last_system_time_ = 0;
  bool failed_ = false;
};

}  // namespace primus::telemetry
