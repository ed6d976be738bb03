#include "telemetry/job_view.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/json_fields.h"

namespace primus::telemetry {
namespace {

using json_fields::Put;

// The ETA's step rate is measured over the last this many samples.
constexpr size_t kRateWindow = 12;

std::string HostOf(const std::vector<NodeSample>& nodes, int node_rank) {
  for (const NodeSample& node : nodes) {
    if (node.node_rank == node_rank) return node.host;
  }
  return "";
}

}  // namespace

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kStarting: return "starting";
    case JobState::kRunning: return "running";
    case JobState::kRestarting: return "restarting";
    case JobState::kSucceeded: return "succeeded";
    case JobState::kFailed: return "failed";
    case JobState::kStopped: return "stopped";
  }
  return "starting";
}

bool IsEndedJobState(std::string_view state) {
  return state == "succeeded" || state == "failed" || state == "stopped" || state == kEndedWithoutRecord;
}

void JobAggregator::Update(const JobInfo& info, std::vector<NodeSample> nodes, double now) {
  info_ = info;
  time_ = now;
  std::sort(nodes.begin(), nodes.end(), [](const NodeSample& a, const NodeSample& b) { return a.node_rank < b.node_rank; });
  nodes_ = std::move(nodes);
  if (info.generation != watched_generation_) {
    watched_generation_ = info.generation;
    stragglers_.Reset();
    step_window_.clear();
  }

  JobProgress progress;
  std::vector<RankTiming> timings;
  std::vector<GpuUtilization> gpus;
  std::vector<double> step_times;
  std::optional<int> loss_rank;
  for (const NodeSample& node : nodes_) {
    for (const WorkerStats& worker : node.workers) {
      const TrainingMetrics& metrics = worker.metrics;
      if (metrics.step && (!progress.step || *metrics.step < *progress.step)) progress.step = metrics.step;
      if (metrics.total_steps && (!progress.total_steps || *metrics.total_steps > *progress.total_steps)) {
        progress.total_steps = metrics.total_steps;
      }
      // The lowest rank that reports a loss: rank 0 for most trainers, the
      // last rank for Megatron-LM (its training_log prints there only).
      if (metrics.loss && (!loss_rank || worker.rank < *loss_rank)) {
        progress.loss = metrics.loss;
        loss_rank = worker.rank;
      }
      if (metrics.tokens_per_s) progress.tokens_per_s = progress.tokens_per_s.value_or(0) + *metrics.tokens_per_s;
      if (metrics.step_time_s) {
        step_times.push_back(*metrics.step_time_s);
        if (metrics.step) timings.push_back({worker.rank, node.node_rank, *metrics.step, *metrics.step_time_s});
      }
    }
    for (const GpuStats& gpu : node.gpus) {
      if (gpu.utilization_percent) gpus.push_back({node.node_rank, gpu.index, *gpu.utilization_percent});
    }
  }
  if (!step_times.empty()) progress.median_step_time_s = Median(step_times);
  if (progress.step && progress.total_steps && *progress.total_steps > 0) {
    progress.progress = std::min(1.0, static_cast<double>(*progress.step) / static_cast<double>(*progress.total_steps));
  }
  if (progress.step) {
    if (!step_window_.empty() && *progress.step < step_window_.back().second) step_window_.clear();
    step_window_.emplace_back(now, *progress.step);
    while (step_window_.size() > kRateWindow) step_window_.pop_front();
    const auto& [first_time, first_step] = step_window_.front();
    if (progress.total_steps && now > first_time && *progress.step > first_step) {
      double rate = static_cast<double>(*progress.step - first_step) / (now - first_time);
      int64_t left = std::max<int64_t>(0, *progress.total_steps - *progress.step);
      progress.eta_s = std::round(static_cast<double>(left) / rate * 10) / 10;
    } else if (progress.total_steps && *progress.step >= *progress.total_steps) {
      progress.eta_s = 0;
    }
  }
  progress_ = progress;
  stragglers_.Observe(timings, gpus);
}

Json JobAggregator::View() const {
  Json job = {{"run_id", info_.run_id},       {"coordinator", info_.coordinator},
              {"time", time_},                {"state", JobStateName(info_.state)},
              {"generation", info_.generation}, {"restarts", info_.restarts},
              {"nnodes", info_.nnodes},       {"world_size", info_.world_size},
              {"interval_s", info_.interval_s}};
  if (info_.agent) job["agent"] = StampToJson(*info_.agent);
  if (!info_.experiment.empty()) job["experiment"] = info_.experiment;
  if (!info_.backend.empty()) job["backend"] = info_.backend;
  if (!info_.framework.empty()) job["framework"] = info_.framework;
  if (info_.started > 0) job["started"] = info_.started;
  if (!info_.cwd.empty()) job["cwd"] = info_.cwd;
  if (!info_.command.empty()) job["command"] = info_.command;
  Put(job, "step", progress_.step);
  Put(job, "total_steps", progress_.total_steps);
  Put(job, "progress", progress_.progress);
  Put(job, "eta_s", progress_.eta_s);
  Put(job, "loss", progress_.loss);
  Put(job, "tokens_per_s", progress_.tokens_per_s);
  Put(job, "median_step_time_s", progress_.median_step_time_s);
  Json stragglers = Json::array();
  for (const RankStraggler& rank : stragglers_.ranks()) {
    stragglers.push_back({{"kind", "rank"},
                          {"rank", rank.rank},
                          {"node_rank", rank.node_rank},
                          {"host", HostOf(nodes_, rank.node_rank)},
                          {"step_time_s", rank.step_time_s},
                          {"median_step_time_s", rank.median_step_time_s},
                          {"ratio", rank.ratio},
                          {"samples", rank.samples}});
  }
  for (const GpuStraggler& gpu : stragglers_.gpus()) {
    stragglers.push_back({{"kind", "gpu"},
                          {"node_rank", gpu.node_rank},
                          {"host", HostOf(nodes_, gpu.node_rank)},
                          {"gpu", gpu.gpu},
                          {"utilization_percent", gpu.utilization_percent},
                          {"median_utilization_percent", gpu.median_utilization_percent},
                          {"samples", gpu.samples}});
  }
  Json nodes = Json::array();
  for (const NodeSample& node : nodes_) nodes.push_back(ToJson(node));
  return Json{{"format", kJobViewFormat}, {"job", std::move(job)}, {"stragglers", std::move(stragglers)},
              {"nodes", std::move(nodes)}};
}

Json JobAggregator::HistoryLine() const {
  Json line = {{"time", time_}, {"generation", info_.generation}, {"state", JobStateName(info_.state)}};
  Put(line, "step", progress_.step);
  Put(line, "loss", progress_.loss);
  Put(line, "tokens_per_s", progress_.tokens_per_s);
  Json nodes = Json::array();
  Json ranks = Json::array();
  for (const NodeSample& node : nodes_) {
    Json entry = {{"node_rank", node.node_rank}, {"host", node.host}};
    Put(entry, "cpu_percent", node.host_stats.cpu_percent);
    Put(entry, "mem_used_bytes", node.host_stats.mem_used_bytes);
    Json utilization = Json::array(), memory = Json::array();
    for (const GpuStats& gpu : node.gpus) {
      utilization.push_back(gpu.utilization_percent ? Json(*gpu.utilization_percent) : Json(nullptr));
      memory.push_back(gpu.memory_used_bytes ? Json(*gpu.memory_used_bytes) : Json(nullptr));
    }
    entry["gpu_utilization_percent"] = std::move(utilization);
    entry["gpu_memory_used_bytes"] = std::move(memory);
    nodes.push_back(std::move(entry));
    for (const WorkerStats& worker : node.workers) {
      Json rank = {{"rank", worker.rank}, {"node_rank", node.node_rank}};
      Put(rank, "step", worker.metrics.step);
      Put(rank, "step_time_s", worker.metrics.step_time_s);
      Put(rank, "tokens_per_s", worker.metrics.tokens_per_s);
      ranks.push_back(std::move(rank));
    }
  }
  line["nodes"] = std::move(nodes);
  line["ranks"] = std::move(ranks);
  Json stragglers = Json::array();
  for (const RankStraggler& rank : stragglers_.ranks()) stragglers.push_back(rank.rank);
  line["stragglers"] = std::move(stragglers);
  return line;
}

}  // namespace primus::telemetry
