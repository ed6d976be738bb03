#include "agent/launch_view.h"

#include <time.h>

#include "util/clock.h"
#include "util/files.h"

namespace primus::agent {
std::string ProcessStateOf(pid_t pid) {
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return "";
  // pid (comm) S ...: the command may hold spaces and parentheses; the state follows the last ')'.
  size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return "";
  switch ((*stat)[close + 2]) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "disk-sleep";
    case 'T':
    case 't': return "stopped";
    case 'Z': return "zombie";
    default: return "";
  }
}

nlohmann::json LaunchViewJson(const LaunchView& view) {
  using Json = nlohmann::json;
  double now = WallSeconds();
  Json workers = Json::array();
  for (const WorkerView& worker : view.workers) {
    Json entry = {{"rank", worker.rank}, {"local_rank", worker.local_rank}, {"pid", worker.pid}};
    std::string state = worker.running ? ProcessStateOf(worker.pid) : "exited";
    if (!state.empty()) entry["state"] = state;
    workers.push_back(std::move(entry));
  }
  Json node = {{"node_rank", view.node_rank}, {"host", view.host}, {"time", now}, {"generation", view.generation},
               {"workers", std::move(workers)}};
  Json job = {{"run_id", view.run_id}, {"time", now},           {"state", view.state},
              {"generation", view.generation}, {"restarts", view.restarts}, {"nnodes", view.nnodes},
              {"world_size", view.world_size}};
  if (view.node_rank == 0) job["coordinator"] = view.host;
  return Json{{"format", "primus-job-telemetry/1"}, {"job", std::move(job)}, {"nodes", Json::array({std::move(node)})}};
}

}  // namespace primus::agent
