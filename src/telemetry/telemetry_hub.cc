#include "telemetry/telemetry_hub.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "util/clock.h"
#include "util/files.h"
#include "util/log.h"
#include "util/private_files.h"

namespace primus::telemetry {
namespace {

// The view is replaced every few seconds: no fsync (a sync on a slow log
// file system would stall the agent's loop).
Status ReplaceFile(const std::string& path, std::string_view content) {
  return WriteFileAtomic(path, content, -1, Durability::kUnsynced);
}

}  // namespace

std::string ThinLines(const std::string& text, size_t keep_one_in) {
  std::string kept;
  size_t index = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    size_t stop = end == std::string::npos ? text.size() : end + 1;
    if (index % keep_one_in == 0) kept.append(text, start, stop - start);
    ++index;
    start = stop;
  }
  return kept;
}

TelemetryHub::TelemetryHub(TelemetrySettings settings, std::unique_ptr<NodeSampler> sampler)
    : settings_(std::move(settings)), sampler_(std::move(sampler)) {
  info_.run_id = settings_.run_id;
  info_.coordinator = settings_.host;
  info_.nnodes = settings_.nnodes;
  info_.world_size = settings_.world_size;
  info_.interval_s = settings_.interval_s;
  info_.experiment = settings_.experiment;
  info_.backend = settings_.backend;
  info_.framework = settings_.framework;
  info_.cwd = settings_.cwd;
  info_.command = settings_.command;
  info_.started = WallSeconds();
  info_.agent = ThisProcess();
  aggregator_.Update(info_, {}, WallSeconds());
  job_view_ = aggregator_.View();
}

std::string TelemetryHub::job_file() const { return JoinPath(settings_.log_dir, "telemetry/job.json"); }
std::string TelemetryHub::history_file() const { return JoinPath(settings_.log_dir, "telemetry/history.jsonl"); }

void TelemetryHub::BeginGeneration(int generation, int node_rank, int nnodes, int world_size, int restarts) {
  if (generation != info_.generation || node_rank != settings_.node_rank) {
    // Samples of the last generation describe other processes (and, in an
    // elastic job, other node ranks).
    nodes_.clear();
    own_.reset();
  }
  settings_.node_rank = node_rank;
  info_.generation = generation;
  info_.nnodes = nnodes;
  info_.world_size = world_size;
  info_.restarts = restarts;
}

void TelemetryHub::SetState(JobState state) { info_.state = state; }

void TelemetryHub::SetRestarts(int restarts) { info_.restarts = restarts; }

void TelemetryHub::SetWritesFiles(bool writes_files) { settings_.writes_files = writes_files; }

NodeSample TelemetryHub::SampleNode(const std::vector<WorkerSource>& workers) {
  double now = WallSeconds();
  NodeSample sample =
      sampler_->Sample(settings_.node_rank, settings_.host, info_.generation, workers, now, MonotonicSeconds());
  own_ = sample;
  nodes_[settings_.node_rank] = Received{sample, now};
  Json view = ToJson(sample);
  std::lock_guard<std::mutex> lock(mutex_);
  node_view_ = std::move(view);
  return sample;
}

void TelemetryHub::AddNodeSample(const Json& json) {
  NodeSample sample = NodeSampleFromJson(json);
  if (sample.generation != info_.generation || sample.node_rank == settings_.node_rank || sample.node_rank < 0) return;
  nodes_[sample.node_rank] = Received{std::move(sample), WallSeconds()};
}

void TelemetryHub::Publish() {
  double now = WallSeconds();
  std::vector<NodeSample> nodes;
  for (const auto& [rank, received] : nodes_) {
    if (!settings_.writes_files && rank != settings_.node_rank) continue;
    NodeSample sample = received.sample;
    sample.age_s = std::max(0.0, std::round((now - received.at) * 1000) / 1000);
    nodes.push_back(std::move(sample));
  }
  if (settings_.writes_files) info_.coordinator = settings_.host;
  aggregator_.Update(info_, std::move(nodes), now);
  Json view = aggregator_.View();
  if (settings_.writes_files) {
    WriteFiles(view, aggregator_.HistoryLine());
    if (!settings_.tensorboard_dir.empty()) {
      if (!tensorboard_) tensorboard_.emplace(settings_.tensorboard_dir, settings_.host);
      tensorboard_->Publish(view, info_.generation, now);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  job_view_ = std::move(view);
}

Json TelemetryHub::JobView() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return job_view_;
}

Json TelemetryHub::NodeView() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return node_view_;
}

void TelemetryHub::WriteFiles(const Json& view, const Json& history_line) {
  std::string dir = JoinPath(settings_.log_dir, "telemetry");
  Status made = MakePrivateDir(dir);
  Status written = made ? ReplaceFile(job_file(), view.dump() + "\n") : made;
  if (!written) {
    if (!warned_) log::Warn("telemetry: {}", written.error().message);
    warned_ = true;
    return;
  }
  std::string path = history_file();
  if (!history_sized_) {
    struct stat info {};
    history_bytes_ = ::stat(path.c_str(), &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
    history_sized_ = true;
  }
  if (history_bytes_ > settings_.history_limit_bytes) {
    auto text = ReadFile(path);
    if (text) {
      std::string thinned = ThinLines(*text);
      if (ReplaceFile(path, thinned)) {
        log::Info("telemetry: {} passed {} MiB; kept every tenth line", path, settings_.history_limit_bytes >> 20);
        history_bytes_ = thinned.size();
      }
    }
  }
  std::string line = history_line.dump() + "\n";
  auto fd = OpenPrivateFileForAppend(path);
  if (!fd) {
    if (!warned_) log::Warn("telemetry: {}", fd.error().message);
    warned_ = true;
    return;
  }
  ssize_t n = ::write(*fd, line.data(), line.size());
  ::close(*fd);
  if (n > 0) history_bytes_ += static_cast<uint64_t>(n);
}

}  // namespace primus::telemetry
