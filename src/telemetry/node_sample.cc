#include "telemetry/node_sample.h"

#include <cctype>
#include <cmath>

#include "util/json_fields.h"

namespace primus::telemetry {
namespace {

// Named one by one, not a using-directive: in a unity build this anonymous
// namespace is shared with the batch's other files, which see only these.
using json_fields::Array;
using json_fields::Integer;
using json_fields::Number;
using json_fields::Put;
using json_fields::SmallInteger;
using json_fields::Text;
using json_fields::Unsigned;

bool IsPartName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

bool IsPartSeconds(double seconds) { return std::isfinite(seconds) && seconds >= 0 && seconds <= 1e6; }

// "time_parts": {"compute": 0.12, "forward-backward": {"s": 0.3,
// "fastest_s": 0.28, "slowest_rank": 3}}: a number when only the seconds are
// known. Names and numbers out of bounds are left out, as are parts past
// kMaxStepTimeParts.
void PutTimeParts(Json& json, const std::vector<StepTimePart>& parts) {
  if (parts.empty()) return;
  Json object = Json::object();
  for (const StepTimePart& part : parts) {
    if (object.size() >= kMaxStepTimeParts || !IsPartName(part.name) || !IsPartSeconds(part.seconds)) continue;
    if (!part.fastest_seconds && !part.slowest_rank) {
      object[part.name] = part.seconds;
      continue;
    }
    Json entry = {{"s", part.seconds}};
    Put(entry, "fastest_s", part.fastest_seconds);
    Put(entry, "slowest_rank", part.slowest_rank);
    object[part.name] = std::move(entry);
  }
  json["time_parts"] = std::move(object);
}

std::vector<StepTimePart> ReadTimeParts(const Json& json) {
  std::vector<StepTimePart> parts;
  for (const auto& [name, value] : json_fields::Object(json, "time_parts").items()) {
    if (parts.size() >= kMaxStepTimeParts) break;
    if (!IsPartName(name)) continue;
    StepTimePart part;
    part.name = name;
    if (value.is_number()) {
      part.seconds = value.get<double>();
    } else if (std::optional<double> seconds = Number(value, "s")) {
      part.seconds = *seconds;
      part.fastest_seconds = Number(value, "fastest_s");
      if (part.fastest_seconds && !IsPartSeconds(*part.fastest_seconds)) part.fastest_seconds.reset();
      part.slowest_rank = json_fields::IntegerIn(value, "slowest_rank", 0, 1 << 24);
    } else {
      continue;
    }
    if (IsPartSeconds(part.seconds)) parts.push_back(std::move(part));
  }
  return parts;
}

void PutMetrics(Json& json, const TrainingMetrics& metrics) {
  Put(json, "step", metrics.step);
  Put(json, "total_steps", metrics.total_steps);
  Put(json, "loss", metrics.loss);
  Put(json, "tokens_per_s", metrics.tokens_per_s);
  Put(json, "step_time_s", metrics.step_time_s);
  Put(json, "lr", metrics.learning_rate);
  Put(json, "grad_norm", metrics.grad_norm);
  Put(json, "loss_scale", metrics.loss_scale);
  Put(json, "tflops_per_gpu", metrics.tflops_per_gpu);
  Put(json, "mfu", metrics.mfu);
  Put(json, "samples_per_s", metrics.samples_per_s);
  Put(json, "global_batch_size", metrics.global_batch_size);
  Put(json, "skipped_iterations", metrics.skipped_iterations);
  Put(json, "nan_iterations", metrics.nan_iterations);
  Put(json, "memory_bytes", metrics.memory_bytes);
  Put(json, "epoch", metrics.epoch);
  PutTimeParts(json, metrics.time_parts);
  Put(json, "metrics_time", metrics.metrics_time);
}

TrainingMetrics ReadMetrics(const Json& json) {
  TrainingMetrics metrics;
  metrics.step = Integer(json, "step");
  metrics.total_steps = Integer(json, "total_steps");
  metrics.loss = Number(json, "loss");
  metrics.tokens_per_s = Number(json, "tokens_per_s");
  metrics.step_time_s = Number(json, "step_time_s");
  metrics.learning_rate = Number(json, "lr");
  metrics.grad_norm = Number(json, "grad_norm");
  metrics.loss_scale = Number(json, "loss_scale");
  metrics.tflops_per_gpu = Number(json, "tflops_per_gpu");
  metrics.mfu = Number(json, "mfu");
  metrics.samples_per_s = Number(json, "samples_per_s");
  metrics.global_batch_size = Integer(json, "global_batch_size");
  metrics.skipped_iterations = Integer(json, "skipped_iterations");
  metrics.nan_iterations = Integer(json, "nan_iterations");
  metrics.memory_bytes = Integer(json, "memory_bytes");
  metrics.epoch = Number(json, "epoch");
  metrics.time_parts = ReadTimeParts(json);
  metrics.elapsed_s = Number(json, "elapsed_s");
  metrics.time = Number(json, "time");
  metrics.restart_count = SmallInteger(json, "restart_count");
  metrics.metrics_time = Number(json, "metrics_time");
  return metrics;
}

}  // namespace

Json ToJson(const NodeSample& sample) {
  Json json = Json::object();
  json["node_rank"] = sample.node_rank;
  json["host"] = sample.host;
  json["time"] = sample.time;
  json["generation"] = sample.generation;
  Json host = Json::object();
  Put(host, "cpus", sample.host_stats.cpus);
  Put(host, "cpu_percent", sample.host_stats.cpu_percent);
  Put(host, "mem_used_bytes", sample.host_stats.mem_used_bytes);
  Put(host, "mem_total_bytes", sample.host_stats.mem_total_bytes);
  Json net = Json::array();
  for (const NetStats& stats : sample.host_stats.net) {
    Json entry = {{"interface", stats.interface}};
    Put(entry, "rx_bytes", stats.rx_bytes);
    Put(entry, "tx_bytes", stats.tx_bytes);
    Put(entry, "rx_bytes_per_s", stats.rx_bytes_per_s);
    Put(entry, "tx_bytes_per_s", stats.tx_bytes_per_s);
    net.push_back(std::move(entry));
  }
  host["net"] = std::move(net);
  json["host_stats"] = std::move(host);
  Json gpus = Json::array();
  for (const GpuStats& gpu : sample.gpus) {
    Json entry = {{"index", gpu.index}, {"bus_id", gpu.bus_id}, {"vendor", gpu.vendor}};
    Put(entry, "utilization_percent", gpu.utilization_percent);
    Put(entry, "memory_used_bytes", gpu.memory_used_bytes);
    Put(entry, "memory_total_bytes", gpu.memory_total_bytes);
    Put(entry, "power_watts", gpu.power_watts);
    Put(entry, "temperature_c", gpu.temperature_c);
    Put(entry, "clock_mhz", gpu.clock_mhz);
    gpus.push_back(std::move(entry));
  }
  json["gpus"] = std::move(gpus);
  Json workers = Json::array();
  for (const WorkerStats& worker : sample.workers) {
    Json entry = {{"rank", worker.rank}, {"local_rank", worker.local_rank}, {"pid", worker.pid},
                  {"state", worker.state}};
    Put(entry, "cpu_percent", worker.cpu_percent);
    Put(entry, "rss_bytes", worker.rss_bytes);
    PutMetrics(entry, worker.metrics);
    workers.push_back(std::move(entry));
  }
  json["workers"] = std::move(workers);
  Put(json, "age_s", sample.age_s);
  return json;
}

NodeSample NodeSampleFromJson(const Json& json) {
  NodeSample sample;
  sample.node_rank = SmallInteger(json, "node_rank").value_or(0);
  sample.host = Text(json, "host");
  sample.time = Number(json, "time").value_or(0);
  sample.generation = SmallInteger(json, "generation").value_or(0);
  const Json empty = Json::object();
  const Json& host = json.is_object() && json.contains("host_stats") ? json["host_stats"] : empty;
  sample.host_stats.cpus = SmallInteger(host, "cpus");
  sample.host_stats.cpu_percent = Number(host, "cpu_percent");
  sample.host_stats.mem_used_bytes = Integer(host, "mem_used_bytes");
  sample.host_stats.mem_total_bytes = Integer(host, "mem_total_bytes");
  for (const Json& entry : Array(host, "net")) {
    NetStats stats;
    stats.interface = Text(entry, "interface");
    stats.rx_bytes = Unsigned(entry, "rx_bytes");
    stats.tx_bytes = Unsigned(entry, "tx_bytes");
    stats.rx_bytes_per_s = Number(entry, "rx_bytes_per_s");
    stats.tx_bytes_per_s = Number(entry, "tx_bytes_per_s");
    sample.host_stats.net.push_back(std::move(stats));
  }
  for (const Json& entry : Array(json, "gpus")) {
    GpuStats gpu;
    gpu.index = SmallInteger(entry, "index").value_or(0);
    gpu.bus_id = Text(entry, "bus_id");
    gpu.vendor = Text(entry, "vendor");
    gpu.utilization_percent = SmallInteger(entry, "utilization_percent");
    gpu.memory_used_bytes = Integer(entry, "memory_used_bytes");
    gpu.memory_total_bytes = Integer(entry, "memory_total_bytes");
    gpu.power_watts = Number(entry, "power_watts");
    gpu.temperature_c = SmallInteger(entry, "temperature_c");
    gpu.clock_mhz = SmallInteger(entry, "clock_mhz");
    sample.gpus.push_back(std::move(gpu));
  }
  for (const Json& entry : Array(json, "workers")) {
    WorkerStats worker;
    worker.rank = SmallInteger(entry, "rank").value_or(0);
    worker.local_rank = SmallInteger(entry, "local_rank").value_or(0);
    worker.pid = SmallInteger(entry, "pid").value_or(0);
    worker.state = Text(entry, "state");
    worker.cpu_percent = Number(entry, "cpu_percent");
    worker.rss_bytes = Integer(entry, "rss_bytes");
    worker.metrics = ReadMetrics(entry);
    sample.workers.push_back(std::move(worker));
  }
  sample.age_s = Number(json, "age_s");
  return sample;
}

Json MetricsLineJson(const TrainingMetrics& metrics) {
  Json json = Json::object();
  TrainingMetrics line = metrics;
  line.metrics_time.reset();  // the reader's, never written
  PutMetrics(json, line);
  Put(json, "elapsed_s", metrics.elapsed_s);
  Put(json, "time", metrics.time);
  Put(json, "restart_count", metrics.restart_count);
  return json;
}

std::optional<TrainingMetrics> MetricsFromJson(const Json& json) {
  if (!json.is_object()) return std::nullopt;
  TrainingMetrics metrics = ReadMetrics(json);
  metrics.metrics_time.reset();  // the agent's, not the worker's
  return metrics;
}

std::optional<TrainingMetrics> ParseMetricsLine(std::string_view line) {
  if (line.empty() || line.find('{') == std::string_view::npos) return std::nullopt;
  std::optional<Json> json = json_fields::ParseObject(line, 64 << 10);
  if (!json) return std::nullopt;
  return MetricsFromJson(*json);
}

}  // namespace primus::telemetry
