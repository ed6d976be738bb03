#include "telemetry/tensorboard_feed.h"

#include <cmath>
#include <limits>

#include "telemetry/node_sample.h"
#include "telemetry/step_time_parts.h"
#include "util/files.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/private_files.h"

namespace primus::telemetry {
namespace {

using Json = nlohmann::json;

// A value a float can hold (TensorBoard's simple_value); others are left out.
void AddIf(Scalars& scalars, const std::string& tag, std::optional<double> value, double scale = 1) {
  if (!value) return;
  double scaled = *value * scale;
  if (std::isfinite(scaled) && std::fabs(scaled) <= std::numeric_limits<float>::max()) {
    scalars.emplace_back(tag, static_cast<float>(scaled));
  }
}

}  // namespace

std::pair<std::optional<int64_t>, Scalars> TrainingScalars(const Json& view) {
  const Json& job = json_fields::Object(view, "job");
  std::optional<int64_t> step = json_fields::Integer(job, "step");
  Scalars scalars;
  AddIf(scalars, "train/loss", json_fields::Number(job, "loss"));
  AddIf(scalars, "train/tokens_per_s", json_fields::Number(job, "tokens_per_s"));
  AddIf(scalars, "train/progress", json_fields::Number(job, "progress"));
  AddIf(scalars, "train/step_time_s", json_fields::Number(job, "median_step_time_s"));
  // What only the workers report: the lowest rank that has each.
  const char* const kRankFields[] = {"lr", "grad_norm", "loss_scale", "tflops_per_gpu", "mfu", "samples_per_s"};
  for (const char* field : kRankFields) {
    std::optional<double> value;
    std::optional<int64_t> from_rank;
    for (const Json& node : json_fields::Array(view, "nodes")) {
      for (const Json& worker : json_fields::Array(node, "workers")) {
        std::optional<double> reported = json_fields::Number(worker, field);
        std::optional<int64_t> rank = json_fields::Integer(worker, "rank");
        if (reported && rank && (!from_rank || *rank < *from_rank)) {
          value = reported;
          from_rank = rank;
        }
      }
    }
    AddIf(scalars, std::string("train/") + field, value);
  }
  // Where the step went, on the busiest rank that says (the others wait for it).
  std::optional<StepTimeBreakdown> busiest;
  for (const Json& node : json_fields::Array(view, "nodes")) {
    for (const Json& worker : json_fields::Array(node, "workers")) {
      std::optional<TrainingMetrics> metrics = MetricsFromJson(worker);
      std::optional<StepTimeBreakdown> parts = metrics ? BreakDownStepTime(*metrics) : std::nullopt;
      if (parts && (!busiest || parts->busy() > busiest->busy())) busiest = parts;
    }
  }
  for (int phase = 0; busiest && phase < kStepPhaseCount; ++phase) {
    AddIf(scalars, std::string("step_time/") + StepPhaseName(static_cast<StepPhase>(phase)) + "_s",
          busiest->seconds[phase]);
  }
  return {step, scalars};
}

Scalars SystemScalars(const Json& view) {
  Scalars scalars;
  for (const Json& node : json_fields::Array(view, "nodes")) {
    std::optional<int64_t> node_rank = json_fields::Integer(node, "node_rank");
    if (!node_rank) continue;
    std::string prefix = "system/node" + std::to_string(*node_rank);
    const Json& host = json_fields::Object(node, "host_stats");
    AddIf(scalars, prefix + "/cpu_cores", json_fields::Number(host, "cpu_percent"), 0.01);
    AddIf(scalars, prefix + "/memory_used_bytes", json_fields::Number(host, "mem_used_bytes"));
    for (const Json& gpu : json_fields::Array(node, "gpus")) {
      std::optional<int64_t> index = json_fields::Integer(gpu, "index");
      if (!index) continue;
      std::string gpu_prefix = prefix + "/gpu" + std::to_string(*index);
      AddIf(scalars, gpu_prefix + "/utilization", json_fields::Number(gpu, "utilization_percent"), 0.01);
      AddIf(scalars, gpu_prefix + "/memory_used_bytes", json_fields::Number(gpu, "memory_used_bytes"));
      AddIf(scalars, gpu_prefix + "/power_watts", json_fields::Number(gpu, "power_watts"));
    }
  }
  return scalars;
}

void TensorBoardFeed::Publish(const Json& view, int generation, double wall_time) {
  if (failed_) return;
  if (!writer_ || generation != generation_) {
    if (Status made = MakePrivateDir(dir_); !made.ok()) {
      failed_ = true;
      log::Warn("TensorBoard events are not written: {}", made.error().message);
      return;
    }
    auto writer = TensorBoardWriter::Open(JoinPath(dir_, "attempt_" + std::to_string(generation)), host_);
    if (!writer.ok()) {
      failed_ = true;
      log::Warn("TensorBoard events are not written: {}", writer.error().message);
      return;
    }
    writer_.emplace(std::move(*writer));
    generation_ = generation;
    last_step_.reset();
    samples_ = 0;
  }
  auto [step, training] = TrainingScalars(view);
  Status written = Status::Ok();
  if (step && step != last_step_ && !training.empty()) {
    written = writer_->Add(*step, wall_time, training);
    last_step_ = step;
  }
  // Node and GPU figures at most every kSystemIntervalS: a 512-GPU job's are
  // 70 KB an event, which every 5 s would be 1.2 GB a day.
  if (written.ok() && (samples_ == 0 || wall_time - last_system_time_ >= kSystemIntervalS)) {
    written = writer_->Add(++samples_, wall_time, SystemScalars(view));
    last_system_time_ = wall_time;
  }
  if (!written.ok()) {
    failed_ = true;
    log::Warn("TensorBoard events are no longer written: {}", written.error().message);
  }
}

}  // namespace primus::telemetry
