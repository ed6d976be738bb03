// One node's sample (docs/monitor.md, "One node's sample"): the host's CPU,
// memory and network, its GPUs, and each worker's process and training
// metrics. It is the `telemetry` control message a member sends to node 0 and
// the entry of `nodes` in the job view, so its JSON shape is a contract shared
// with `monitor`, the Prometheus endpoint and the HTML report. Unknown values
// are std::nullopt and are left out of the JSON, never written as -1 or 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace primus::telemetry {

using Json = nlohmann::json;

struct NetStats {
  std::string interface;
  std::optional<uint64_t> rx_bytes, tx_bytes;
  std::optional<double> rx_bytes_per_s, tx_bytes_per_s;
};

struct HostStats {
  std::optional<int> cpus;
  std::optional<double> cpu_percent;  // of one core: 16 busy cores read 1600
  std::optional<int64_t> mem_used_bytes, mem_total_bytes;
  std::vector<NetStats> net;
};

struct GpuStats {
  int index = 0;
  std::string bus_id;
  std::string vendor;  // "amd" | "nvidia"
  std::optional<int> utilization_percent;
  std::optional<int64_t> memory_used_bytes, memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<int> temperature_c;
  std::optional<int> clock_mhz;
};

// One part of a step's time, as its source names it: the example trainer's
// "compute", "communication", "data", or a Megatron-LM timer
// ("forward-backward", "all-grads-sync", ...), in seconds per step. Megatron
// prints the whole job's view from one rank: `seconds` is then the slowest
// rank's figure, `fastest_seconds` the fastest's (its minmax option) and
// `slowest_rank` which rank was slowest (its all option).
// telemetry/step_time_parts.h turns the parts into phases.
struct StepTimePart {
  std::string name;
  double seconds = 0;
  std::optional<double> fastest_seconds;
  std::optional<int> slowest_rank;
};

// What a worker reported in one line of its metrics file (every field
// optional: a field that is missing, null or of the wrong type is unknown).
struct TrainingMetrics {
  std::optional<int64_t> step, total_steps;
  std::optional<double> loss, tokens_per_s, step_time_s;
  // What frameworks print beside them (telemetry/progress_line.h), each
  // absent unless the worker reported it.
  std::optional<double> learning_rate, grad_norm, loss_scale;
  std::optional<double> tflops_per_gpu;  // achieved model TFLOP/s per GPU
  std::optional<double> mfu;             // model FLOPs utilisation, 0-1
  std::optional<double> samples_per_s;
  std::optional<int64_t> global_batch_size;
  std::optional<int64_t> skipped_iterations, nan_iterations;  // Megatron's counts since its last line
  std::optional<int64_t> memory_bytes;   // the device memory the framework reports (TorchTitan: max reserved)
  std::optional<double> epoch;
  // Where the step went, when the source says (at most kMaxStepTimeParts;
  // a name is at most 64 characters of [A-Za-z0-9._-]).
  std::vector<StepTimePart> time_parts;
  std::optional<double> elapsed_s;     // since the training started
  std::optional<double> time;          // the worker's clock, seconds since the epoch
  std::optional<int> restart_count;    // the attempt (TORCHELASTIC_RESTART_COUNT) that wrote it
  std::optional<double> metrics_time;  // when the worker wrote it (the file's modification time)
};

inline constexpr size_t kMaxStepTimeParts = 32;

struct WorkerStats {
  int rank = 0;
  int local_rank = 0;
  int pid = 0;
  std::string state;  // running, sleeping, disk-sleep, stopped, zombie, exited
  std::optional<double> cpu_percent;
  std::optional<int64_t> rss_bytes;
  TrainingMetrics metrics;
};

struct NodeSample {
  int node_rank = 0;
  std::string host;
  double time = 0;  // seconds since the epoch
  int generation = 0;
  HostStats host_stats;
  std::vector<GpuStats> gpus;
  std::vector<WorkerStats> workers;
  std::optional<double> age_s;  // node 0's job view only: seconds since it received the sample
};

Json ToJson(const NodeSample& sample);
// Never throws: fields of the wrong type or missing read as unknown (a
// peer's odd message must not end the agent that reads it).
NodeSample NodeSampleFromJson(const Json& json);

// The metrics fields of one worker's line ("step", "loss", ...); nullopt when
// the line is not a JSON object.
std::optional<TrainingMetrics> MetricsFromJson(const Json& json);

// A metrics line as a worker writes it to PRIMUS_METRICS_FILE (the fields
// it has; ParseMetricsLine reads it back).
Json MetricsLineJson(const TrainingMetrics& metrics);

// One line of a metrics file (PRIMUS_METRICS_FILE, a trainer's
// metrics.jsonl), parsed safely (util/json_fields.h): the one reader of
// such lines for telemetry, train's progress and analyze. nullopt when the
// line is not a JSON object (or is over 64 KiB).
std::optional<TrainingMetrics> ParseMetricsLine(std::string_view line);

}  // namespace primus::telemetry
