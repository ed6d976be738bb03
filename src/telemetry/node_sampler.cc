#include "telemetry/node_sampler.h"

#include "platform/routing.h"
#include "util/strings.h"

namespace primus::telemetry {

NodeSampler::NodeSampler(NodeSamplerSettings settings)
    : host_(settings.roots, settings.interface), gpus_(settings.gpus, settings.roots, settings.nvml_library) {}

NodeSample NodeSampler::Sample(int node_rank, const std::string& host, int generation,
                               const std::vector<WorkerSource>& workers, double wall, double monotonic) {
  NodeSample sample;
  sample.node_rank = node_rank;
  sample.host = host;
  sample.time = wall;
  sample.generation = generation;
  sample.host_stats = host_.SampleHost(monotonic);
  sample.gpus = gpus_.Sample();
  std::vector<WorkerProbe> probes;
  probes.reserve(workers.size());
  for (const WorkerSource& worker : workers) probes.push_back(worker.probe);
  sample.workers = host_.SampleWorkers(probes, monotonic);
  std::map<std::string, std::unique_ptr<MetricsReader>> kept;
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::string& path = workers[i].metrics_file;
    if (path.empty()) continue;
    auto found = readers_.find(path);
    std::unique_ptr<MetricsReader> reader =
        found != readers_.end() ? std::move(found->second) : std::make_unique<MetricsReader>(path);
    if (const std::optional<TrainingMetrics>& metrics = reader->Poll()) sample.workers[i].metrics = *metrics;
    kept[path] = std::move(reader);
  }
  readers_ = std::move(kept);
  return sample;
}

std::string JobInterface(const platform::HostInfo& host, const std::string& master_addr, bool single_node,
                         const std::string& nccl_socket_ifname, const std::string& gloo_socket_ifname) {
  for (const std::string& variable : {nccl_socket_ifname, gloo_socket_ifname}) {
    if (variable.empty()) continue;
    std::string first = Split(variable, ',').front();
    if (!first.empty() && first[0] == '^') continue;  // an exclusion names no interface
    if (!first.empty() && first[0] == '=') first = first.substr(1);
    if (!first.empty()) return first;
  }
  if (single_node || master_addr.empty()) return "lo";
  auto address = platform::ResolveIpv4(master_addr);
  if (!address) return "";
  if (platform::IsLoopbackAddress(*address)) return "lo";
  return platform::InterfaceForAddress(host, *address).interface;
}

}  // namespace primus::telemetry
