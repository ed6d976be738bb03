// The running agent's telemetry, in one object: RunWorkers owns it, the
// supervisor feeds it (this node's sample every interval; on node 0 also
// the other nodes' samples from the control channel), and anyone holding it
// may read the current views, e.g. the HTTP server of --metrics-port:
//   JobView()  node 0: the whole job (docs/monitor.md, "The job's view");
//              any other node: the same shape with its own node only.
//   NodeView() this node's latest sample ("One node's sample").
// Node 0 (writes_files) also writes <log_dir>/telemetry/job.json, replaced
// atomically at every publish, and appends a line to history.jsonl; above
// history_limit_bytes the history is thinned to every tenth line, so a long
// run keeps its whole span at a coarser grain.
// The readers are safe to call from another thread; the feeding side runs in
// the agent's loop.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "telemetry/job_view.h"
#include "telemetry/tensorboard_feed.h"
#include "telemetry/node_sampler.h"

namespace primus::telemetry {

inline constexpr uint64_t kHistoryLimitBytes = 64ull << 20;

struct TelemetrySettings {
  std::string log_dir;
  double interval_s = 5;
  std::string run_id;
  std::string host;        // this node's
  int node_rank = 0;
  int nnodes = 1;
  int world_size = 1;
  bool writes_files = true;  // node 0 (the coordinator)
  uint64_t history_limit_bytes = kHistoryLimitBytes;
  std::string experiment, backend, framework;  // the job's names, for the view ("" when unknown)
  std::string cwd, command;  // the agent's working directory; the workers' command, redacted (JobInfo)
  std::string tensorboard_dir;  // node 0 writes TensorBoard events here (tensorboard_feed.h); "" none
};

class TelemetryHub {
 public:
  TelemetryHub(TelemetrySettings settings, std::unique_ptr<NodeSampler> sampler);

  // ---- fed by the agent ----
  // A generation starts (the first one too): this node's place in it.
  void BeginGeneration(int generation, int node_rank, int nnodes, int world_size, int restarts);
  void SetState(JobState state);
  // The job decided to restart: `restarts` counts it already.
  void SetRestarts(int restarts);
  // Whether this agent writes the job's files (decided once the link is open).
  void SetWritesFiles(bool writes_files);
  // Takes this node's sample now and keeps it as this node's view.
  NodeSample SampleNode(const std::vector<WorkerSource>& workers);
  // A member's sample, as its `telemetry` message carried it (node 0).
  void AddNodeSample(const Json& sample);
  // Recomputes the job view from the latest samples; node 0 writes the files.
  void Publish();

  // ---- read by anyone ----
  Json JobView() const;
  Json NodeView() const;  // {} before the first sample
  std::string job_file() const;      // <log_dir>/telemetry/job.json
  std::string history_file() const;  // <log_dir>/telemetry/history.jsonl
  double interval_s() const { return settings_.interval_s; }

 private:
  struct Received {
    NodeSample sample;
    double at = 0;  // wall time it arrived
  };
  void WriteFiles(const Json& view, const Json& history_line);

  TelemetrySettings settings_;
  std::unique_ptr<NodeSampler> sampler_;
  JobInfo info_;
  JobAggregator aggregator_;
  std::map<int, Received> nodes_;  // by node rank, this node's included
  std::optional<NodeSample> own_;
  uint64_t history_bytes_ = 0;
  bool history_sized_ = false;
  bool warned_ = false;
  std::optional<TensorBoardFeed> tensorboard_;  // node 0, when settings_.tensorboard_dir is set

  mutable std::mutex mutex_;  // guards the two views below
  Json job_view_;
  Json node_view_ = Json::object();
};

// Keeps the first line and every tenth after it (exposed for tests).
std::string ThinLines(const std::string& text, size_t keep_one_in = 10);

}  // namespace primus::telemetry
