// Takes one node's sample: the host (HostSampler), its GPUs (GpuSampler) and
// each worker's process and latest metrics line (one MetricsReader per
// metrics file, kept across samples and dropped with its worker). Everything
// it reads is local files, or NVML on a host with NVIDIA GPUs: a sample
// never waits on the network.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "telemetry/gpu_sampler.h"
#include "telemetry/host_sampler.h"
#include "telemetry/metrics_reader.h"
#include "telemetry/node_sample.h"

namespace primus::telemetry {

struct WorkerSource {
  WorkerProbe probe;
  std::string metrics_file;  // "" when the agent does not know it (the user set PRIMUS_METRICS_FILE)
};

struct NodeSamplerSettings {
  platform::Roots roots;
  std::vector<platform::GpuInfo> gpus;   // from platform::DetectHost, once per launch
  std::string interface;                 // the job's network interface ("" for none)
  std::string nvml_library = "libnvidia-ml.so.1";
};

class NodeSampler {
 public:
  explicit NodeSampler(NodeSamplerSettings settings);

  // `wall`: seconds since the epoch (the sample's time); `monotonic`: for rates.
  NodeSample Sample(int node_rank, const std::string& host, int generation, const std::vector<WorkerSource>& workers,
                    double wall, double monotonic);

 private:
  HostSampler host_;
  GpuSampler gpus_;
  std::map<std::string, std::unique_ptr<MetricsReader>> readers_;  // by path
};

// The interface a job's traffic uses on this host: NCCL_SOCKET_IFNAME or
// GLOO_SOCKET_IFNAME when set (the first name of a list; a "^" exclusion or
// "=" exact-match prefix is dropped), else the one that routes to
// `master_addr`, loopback ("lo") for a single-node job. "" when unknown.
std::string JobInterface(const platform::HostInfo& host, const std::string& master_addr, bool single_node,
                         const std::string& nccl_socket_ifname, const std::string& gloo_socket_ifname);

}  // namespace primus::telemetry
