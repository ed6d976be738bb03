#include "telemetry/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "telemetry/node_sample.h"
#include "telemetry/step_time_parts.h"

namespace primus::telemetry {
namespace {

using Json = nlohmann::json;

enum class Type { kGauge, kCounter };

// One series family read from one field of an object of the view, in
// Prometheus's base units: the field times `scale` (percent -> ratio 0-1,
// MHz -> hertz).
struct FieldFamily {
  const char* name;
  const char* field;
  Type type;
  const char* help;
  double scale = 1;
};

constexpr FieldFamily kJobFamilies[] = {
    {"primus_job_steps_total", "step", Type::kCounter, "Lowest step any rank reported (a restart from a checkpoint resets it)."},
    {"primus_job_total_steps", "total_steps", Type::kGauge, "Step the run ends at."},
    {"primus_job_progress_ratio", "progress", Type::kGauge, "Step divided by total steps."},
    {"primus_job_eta_seconds", "eta_s", Type::kGauge, "Estimated seconds to the last step, from the recent step rate."},
    {"primus_job_loss", "loss", Type::kGauge, "Loss of the lowest rank that reports one (rank 0, or Megatron-LM's last rank)."},
    {"primus_job_tokens_per_second", "tokens_per_s", Type::kGauge, "Tokens per second, summed over ranks."},
    {"primus_job_restarts_total", "restarts", Type::kCounter, "Restarts of the job's workers so far."},
    {"primus_job_generation", "generation", Type::kGauge, "Generation of workers now running (TORCHELASTIC_RESTART_COUNT)."},
    {"primus_job_nodes", "nnodes", Type::kGauge, "Nodes in the job."},
    {"primus_job_world_size", "world_size", Type::kGauge, "Workers in the job (WORLD_SIZE)."},
};

constexpr FieldFamily kRankFamilies[] = {
    {"primus_rank_steps_total", "step", Type::kCounter, "Step this rank last finished (a restart from a checkpoint resets it)."},
    {"primus_rank_loss", "loss", Type::kGauge, "Loss this rank reported at its last step."},
    {"primus_rank_tokens_per_second", "tokens_per_s", Type::kGauge, "This rank's own tokens per second."},
    {"primus_rank_step_time_seconds", "step_time_s", Type::kGauge, "Seconds this rank's last step took."},
    {"primus_rank_cpu_cores", "cpu_percent", Type::kGauge, "CPU use of the worker process in cores (1: one core busy).", 0.01},
    {"primus_rank_rss_bytes", "rss_bytes", Type::kGauge, "Resident memory of the worker process."},
    {"primus_rank_learning_rate", "lr", Type::kGauge, "Learning rate this rank reported."},
    {"primus_rank_grad_norm", "grad_norm", Type::kGauge, "Gradient norm this rank reported."},
    {"primus_rank_loss_scale", "loss_scale", Type::kGauge, "Loss scale this rank reported."},
    {"primus_rank_model_flops_per_second", "tflops_per_gpu", Type::kGauge, "Model FLOP/s per GPU this rank reported.", 1e12},
    {"primus_rank_mfu_ratio", "mfu", Type::kGauge, "Model FLOPs utilisation this rank reported, 0-1."},
    {"primus_rank_samples_per_second", "samples_per_s", Type::kGauge, "Samples per second this rank reported."},
    {"primus_rank_device_memory_bytes", "memory_bytes", Type::kGauge, "Device memory the framework reported for this rank."},
    {"primus_rank_skipped_iterations", "skipped_iterations", Type::kGauge, "Iterations skipped since the rank's previous report."},
    {"primus_rank_nan_iterations", "nan_iterations", Type::kGauge, "Iterations with a NaN since the rank's previous report."},
};

constexpr FieldFamily kGpuFamilies[] = {
    {"primus_gpu_utilization_ratio", "utilization_percent", Type::kGauge, "GPU busy time, 0-1.", 0.01},
    {"primus_gpu_memory_used_bytes", "memory_used_bytes", Type::kGauge, "GPU memory in use."},
    {"primus_gpu_memory_total_bytes", "memory_total_bytes", Type::kGauge, "GPU memory in all."},
    {"primus_gpu_power_watts", "power_watts", Type::kGauge, "GPU power draw."},
    {"primus_gpu_temperature_celsius", "temperature_c", Type::kGauge, "GPU temperature."},
    {"primus_gpu_clock_hertz", "clock_mhz", Type::kGauge, "GPU compute clock.", 1e6},
};

constexpr FieldFamily kNodeFamilies[] = {
    {"primus_node_cpu_cores", "cpu_percent", Type::kGauge, "CPU use of the node in cores (1: one core busy).", 0.01},
    {"primus_node_memory_used_bytes", "mem_used_bytes", Type::kGauge, "Memory in use on the node."},
    {"primus_node_memory_total_bytes", "mem_total_bytes", Type::kGauge, "Memory of the node."},
};

constexpr FieldFamily kNetworkFamilies[] = {
    {"primus_node_network_receive_bytes_total", "rx_bytes", Type::kCounter, "Bytes received on the job's interface."},
    {"primus_node_network_transmit_bytes_total", "tx_bytes", Type::kCounter, "Bytes sent on the job's interface."},
};

const Json* Field(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json* ArrayField(const Json& object, const char* key) {
  const Json* value = Field(object, key);
  return value != nullptr && value->is_array() ? value : nullptr;
}

template <typename Number>
void AppendChars(std::string& out, Number number) {
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), number);
  out.append(buffer, error == std::errc() ? end : buffer);
}

void AppendDouble(std::string& out, double number) {
  if (std::isnan(number)) {
    out += "NaN";
  } else if (std::isinf(number)) {
    out += number > 0 ? "+Inf" : "-Inf";
  } else {
    AppendChars(out, number);  // the shortest text that reads back as the same double
  }
}

// Appends a JSON number; false (nothing appended) for anything else.
bool AppendNumber(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::number_integer: AppendChars(out, value.get<int64_t>()); return true;
    case Json::value_t::number_unsigned: AppendChars(out, value.get<uint64_t>()); return true;
    case Json::value_t::number_float: AppendDouble(out, value.get<double>()); return true;
    default: return false;
  }
}

void AppendEscapedHelp(std::string& out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
}

void AppendEscapedLabel(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
}

// `name="value"` for a label whose value is a JSON string or number ("" otherwise).
void AppendLabel(std::string& out, const char* name, const Json* value) {
  if (out.size() > 1) out += ',';
  out += name;
  out += "=\"";
  if (value != nullptr) {
    if (value->is_string()) AppendEscapedLabel(out, value->get_ref<const std::string&>());
    else AppendNumber(out, *value);
  }
  out += '"';
}

// One family at a time: HELP and TYPE, then its samples; a family that got
// no sample is taken back out.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void Begin(const char* name, Type type, const char* help) {
    start_ = out_.size();
    samples_ = 0;
    name_ = name;
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    AppendEscapedHelp(out_, help);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += type == Type::kCounter ? " counter\n" : " gauge\n";
  }
  void Sample(std::string_view labels, const Json* value, double scale = 1) {
    if (value == nullptr) return;
    size_t mark = out_.size();
    StartSample(labels);
    bool written = scale == 1 ? AppendNumber(out_, *value) : value->is_number();
    if (written && scale != 1) {
      // 15 significant digits: the unit change's rounding (153.2 / 100 is
      // 1.5319999999999998 in binary) does not show.
      double number = value->get<double>() * scale;
      if (std::isfinite(number)) {
        char buffer[32];
        int n = std::snprintf(buffer, sizeof(buffer), "%.15g", number);
        out_.append(buffer, static_cast<size_t>(n));
      } else {
        AppendDouble(out_, number);
      }
    }
    if (!written) {
      out_.resize(mark);
      return;
    }
    EndSample();
  }
  void Sample(std::string_view labels, int64_t value) {
    StartSample(labels);
    AppendChars(out_, value);
    EndSample();
  }
  void End() {
    if (samples_ == 0) out_.resize(start_);
  }

 private:
  void StartSample(std::string_view labels) {
    out_ += name_;
    out_ += labels;
    out_ += ' ';
  }
  void EndSample() {
    out_ += '\n';
    ++samples_;
  }

  std::string& out_;
  size_t start_ = 0;
  int samples_ = 0;
  const char* name_ = "";
};

struct Labelled {
  std::string labels;  // {node="0",host="h",...}
  const Json* object;
};

struct RankEntry {
  std::string labels;
  const Json* worker;
  int64_t rank;
};

struct GpuEntry {
  std::string labels;
  const Json* gpu;
  std::pair<int64_t, int64_t> node_gpu;
};

std::optional<int64_t> IntegerOf(const Json* value) {
  if (value == nullptr || !value->is_number_integer()) return std::nullopt;
  return value->get<int64_t>();
}

// primus_rank_running: 1 while the worker process lives, 0 once it exited
// (or is a zombie); left out when the view has no state for it.
const char* RunningValue(const Json& worker) {
  const Json* state = Field(worker, "state");
  if (state == nullptr || !state->is_string()) return nullptr;
  const std::string& text = state->get_ref<const std::string&>();
  return text == "exited" || text == "zombie" ? "0" : "1";
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  AppendEscapedLabel(out, value);
  return out;
}

std::string RenderPrometheusText(const nlohmann::json& view) {
  static const Json kNull;
  const Json& job = view.is_object() && view.contains("job") ? view["job"] : kNull;

  // Everything labelled, gathered once; each family then walks its list.
  std::vector<RankEntry> ranks;
  std::vector<GpuEntry> gpus;
  std::vector<Labelled> nodes, networks;
  if (const Json* node_list = ArrayField(view, "nodes")) {
    for (const Json& node : *node_list) {
      if (!node.is_object()) continue;
      const Json* node_rank = Field(node, "node_rank");
      const Json* host = Field(node, "host");
      std::string node_labels = "{";
      AppendLabel(node_labels, "node", node_rank);
      AppendLabel(node_labels, "host", host);
      std::string open = node_labels;  // {node="..",host=".." without the closing brace
      node_labels += '}';
      nodes.push_back({node_labels, &node});
      if (const Json* host_stats = Field(node, "host_stats")) {
        if (const Json* nets = ArrayField(*host_stats, "net")) {
          for (const Json& net : *nets) {
            std::string labels = open;
            AppendLabel(labels, "interface", Field(net, "interface"));
            labels += '}';
            networks.push_back({std::move(labels), &net});
          }
        }
      }
      if (const Json* workers = ArrayField(node, "workers")) {
        for (const Json& worker : *workers) {
          std::optional<int64_t> rank = IntegerOf(Field(worker, "rank"));
          if (!rank) continue;  // two unnamed ranks would be one series
          std::string labels = open;
          AppendLabel(labels, "rank", Field(worker, "rank"));
          AppendLabel(labels, "local_rank", Field(worker, "local_rank"));
          labels += '}';
          ranks.push_back({std::move(labels), &worker, *rank});
        }
      }
      if (const Json* gpu_list = ArrayField(node, "gpus")) {
        for (const Json& gpu : *gpu_list) {
          std::optional<int64_t> index = IntegerOf(Field(gpu, "index"));
          if (!index) continue;
          std::string labels = open;
          AppendLabel(labels, "gpu", Field(gpu, "index"));
          labels += '}';
          gpus.push_back({std::move(labels), &gpu, {IntegerOf(node_rank).value_or(-1), *index}});
        }
      }
    }
  }

  // Stragglers: only a view that judged them says 0 for the others.
  const Json* stragglers = ArrayField(view, "stragglers");
  std::set<int64_t> straggling_ranks;
  std::set<std::pair<int64_t, int64_t>> straggling_gpus;
  if (stragglers != nullptr) {
    for (const Json& straggler : *stragglers) {
      const Json* kind = Field(straggler, "kind");
      if (kind == nullptr || !kind->is_string()) continue;
      if (*kind == "rank") {
        if (auto rank = IntegerOf(Field(straggler, "rank"))) straggling_ranks.insert(*rank);
      } else if (*kind == "gpu") {
        auto node_rank = IntegerOf(Field(straggler, "node_rank"));
        auto gpu = IntegerOf(Field(straggler, "gpu"));
        if (node_rank && gpu) straggling_gpus.insert({*node_rank, *gpu});
      }
    }
  }

  std::string out;
  out.reserve(4096 + ranks.size() * 8 * 96 + gpus.size() * 7 * 96 + nodes.size() * 4 * 80);
  Writer writer(out);

  for (const FieldFamily& family : kJobFamilies) {
    writer.Begin(family.name, family.type, family.help);
    writer.Sample("", Field(job, family.field), family.scale);
    writer.End();
  }
  // One series that carries the job's names as labels (join on it in queries).
  if (Field(job, "run_id") != nullptr) {
    std::string labels = "{";
    AppendLabel(labels, "run_id", Field(job, "run_id"));
    AppendLabel(labels, "experiment", Field(job, "experiment"));
    AppendLabel(labels, "backend", Field(job, "backend"));
    AppendLabel(labels, "framework", Field(job, "framework"));
    labels += '}';
    writer.Begin("primus_job_info", Type::kGauge, "Always 1; its labels name the job: run id, experiment, backend, framework.");
    writer.Sample(labels, int64_t{1});
    writer.End();
  }
  if (stragglers != nullptr) {
    writer.Begin("primus_job_stragglers", Type::kGauge, "Ranks and GPUs named as stragglers now.");
    writer.Sample("", static_cast<int64_t>(stragglers->size()));
    writer.End();
  }

  for (const FieldFamily& family : kRankFamilies) {
    writer.Begin(family.name, family.type, family.help);
    for (const RankEntry& rank : ranks) writer.Sample(rank.labels, Field(*rank.worker, family.field), family.scale);
    writer.End();
  }
  writer.Begin("primus_rank_step_phase_seconds", Type::kGauge,
               "Seconds of the rank's last reported step in each phase (compute, communication, data, optimizer, "
               "other), where its trainer says (Megatron-LM's timers: the job's view, from the rank that prints them).");
  for (const RankEntry& rank : ranks) {
    std::optional<TrainingMetrics> metrics = MetricsFromJson(*rank.worker);
    std::optional<StepTimeBreakdown> parts = metrics ? BreakDownStepTime(*metrics) : std::nullopt;
    if (!parts || rank.labels.size() < 2) continue;
    for (int phase = 0; phase < kStepPhaseCount; ++phase) {
      std::string labels = rank.labels.substr(0, rank.labels.size() - 1) + ",phase=\"" +
                           StepPhaseName(static_cast<StepPhase>(phase)) + "\"}";
      Json seconds = parts->seconds[phase];
      writer.Sample(labels, &seconds);
    }
  }
  writer.End();
  writer.Begin("primus_rank_running", Type::kGauge, "1 while the worker process lives, 0 once it exited.");
  for (const RankEntry& rank : ranks) {
    if (const char* running = RunningValue(*rank.worker)) writer.Sample(rank.labels, running[0] == '1' ? 1 : 0);
  }
  writer.End();
  if (stragglers != nullptr) {
    writer.Begin("primus_rank_straggler", Type::kGauge, "1 when the rank is named as a straggler.");
    for (const RankEntry& rank : ranks) writer.Sample(rank.labels, straggling_ranks.count(rank.rank) ? 1 : 0);
    writer.End();
  }

  for (const FieldFamily& family : kGpuFamilies) {
    writer.Begin(family.name, family.type, family.help);
    for (const GpuEntry& gpu : gpus) writer.Sample(gpu.labels, Field(*gpu.gpu, family.field), family.scale);
    writer.End();
  }
  if (stragglers != nullptr) {
    writer.Begin("primus_gpu_straggler", Type::kGauge, "1 when the GPU is named as a straggler.");
    for (const GpuEntry& gpu : gpus) writer.Sample(gpu.labels, straggling_gpus.count(gpu.node_gpu) ? 1 : 0);
    writer.End();
  }

  for (const FieldFamily& family : kNodeFamilies) {
    writer.Begin(family.name, family.type, family.help);
    for (const Labelled& node : nodes) {
      const Json* host_stats = Field(*node.object, "host_stats");
      writer.Sample(node.labels, host_stats != nullptr ? Field(*host_stats, family.field) : nullptr, family.scale);
    }
    writer.End();
  }
  writer.Begin("primus_node_report_age_seconds", Type::kGauge, "Seconds since node 0 received the node's sample.");
  for (const Labelled& node : nodes) writer.Sample(node.labels, Field(*node.object, "age_s"));
  writer.End();

  for (const FieldFamily& family : kNetworkFamilies) {
    writer.Begin(family.name, family.type, family.help);
    for (const Labelled& net : networks) writer.Sample(net.labels, Field(*net.object, family.field));
    writer.End();
  }
  return out;
}

}  // namespace primus::telemetry
