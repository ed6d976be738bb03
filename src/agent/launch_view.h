// The job view (docs/monitor.md, "The job's view") built from what the agent
// itself knows of its launch: run id, state, generation, restarts, node count,
// world size, and this node's workers (rank, local rank, pid, process state).
// The metrics port serves it; it carries no samples (no GPU, CPU or training
// metrics), which the node's telemetry adds where it runs.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace primus::agent {

struct WorkerView {
  int rank = 0;
  int local_rank = 0;
  pid_t pid = 0;
  bool running = false;  // not yet reaped
};

struct LaunchView {
  std::string run_id;
  std::string host;
  std::string state = "starting";  // starting, running, restarting, succeeded, failed
  int node_rank = 0;
  int nnodes = 1;
  int world_size = 1;
  int generation = 0;
  int restarts = 0;
  std::vector<WorkerView> workers;
};

// The job view of `view` ("nodes" holds this node only). A running worker's
// state is its /proc/<pid>/stat state in words (running, sleeping, ...); a
// reaped one's is "exited".
nlohmann::json LaunchViewJson(const LaunchView& view);

// 'R' -> "running", 'S' -> "sleeping", 'D' -> "disk-sleep", 'T'/'t' ->
// "stopped", 'Z' -> "zombie", anything else (or an unreadable file) -> "".
std::string ProcessStateOf(pid_t pid);

}  // namespace primus::agent
