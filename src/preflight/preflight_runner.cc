#include "preflight/preflight_runner.h"

#include <fmt/format.h>

#include <iostream>

#include "io/signal_channel.h"
#include "platform/host_detect.h"
#include "platform/gpu_live_status.h"
#include "preflight/cross_node_checks.h"
#include "preflight/host_checks.h"
#include "preflight/network_checks.h"
#include "preflight/node_exchange.h"
#include "preflight/perf_checks.h"
#include "preflight/preflight_report.h"
#include "preflight/software_checks.h"
#include "util/files.h"
#include "util/log.h"

namespace primus::preflight {
namespace {

// The secret every node of the job shares (the launcher sets it for Slurm,
// ssh and Kubernetes jobs); "" when unset, on every node alike.
std::string JobToken(const std::map<std::string, std::string>& env) {
  auto it = env.find("PRIMUS_JOB_TOKEN");
  return it == env.end() ? "" : it->second;
}

NetworkSettings NetworkFrom(const std::map<std::string, std::string>& env, const JobPlacement& placement) {
  NetworkSettings settings;
  for (const char* name : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_IB_HCA"}) {
    if (auto found = env.find(name); found != env.end()) settings.env[name] = found->second;
  }
  settings.nnodes = placement.nnodes;
  settings.node_rank = placement.node_rank;
  settings.master_addr = placement.master_addr;
  settings.master_port = placement.master_port;
  return settings;
}

HostFacts FactsFor(const platform::HostInfo& host, const platform::Roots& roots, const std::string& workspace) {
  HostFacts facts = ReadHostFacts(roots, workspace);
  facts.amd_gpus = !host.gpus.empty() && host.gpus.front().vendor == "amd";
  facts.rdma = !host.ib_ports.empty();
  return facts;
}

void Append(std::vector<CheckResult>* to, std::vector<CheckResult> from) {
  to->insert(to->end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

std::vector<CheckResult> QuickTrainChecks(const platform::HostInfo& host, const platform::Roots& roots,
                                          const std::map<std::string, std::string>& env, const JobPlacement& placement,
                                          const std::string& workspace) {
  std::vector<CheckResult> results;
  for (CheckResult& r : CheckHost(FactsFor(host, roots, workspace))) {
    if (r.name == "/dev/shm" && host.gpus.empty() && r.status == CheckStatus::kFail) {
      r.status = CheckStatus::kWarn;  // CPU ranks over gloo do not need NCCL's shared memory
    }
    // Disk: only a failure (under 10 GiB) is worth a word before every launch.
    bool disk_failure = r.name.starts_with("disk ") && r.status == CheckStatus::kFail;
    if (r.name == "/dev/shm" || disk_failure) results.push_back(std::move(r));
  }
  for (CheckResult& r : CheckGpus(host, roots, {}, {})) {
    if (r.name == "count" || r.name == "model" || r.name.starts_with("ecc ")) results.push_back(std::move(r));
  }
  for (CheckResult& r : CheckNetwork(host, NetworkFrom(env, placement))) {
    if (!r.name.starts_with("rdma")) results.push_back(std::move(r));
  }
  return results;
}

Result<int> RunPreflight(const PreflightOptions& options, const JobPlacement& placement, const platform::Roots& roots,
                         const std::map<std::string, std::string>& env, const std::string& self_binary,
                         PreflightVerdict* verdict) {
  platform::HostInfo host = platform::DetectHost(roots);
  NodeReport own;
  own.node_rank = placement.node_rank;
  own.host = host.hostname.empty() ? log::HostName() : host.hostname;
  if (options.host) Append(&own.results, CheckHost(FactsFor(host, roots, options.workspace)));
  if (options.gpu) {
    std::vector<platform::GpuLiveStatus> runtime =
        host.gpus.empty() ? std::vector<platform::GpuLiveStatus>{} : platform::QueryLiveStatus(host, roots);
    Append(&own.results, CheckGpus(host, roots, runtime, options.expect));
  }
  if (options.network) Append(&own.results, CheckNetwork(host, NetworkFrom(env, placement)));
  SoftwareFacts software;
  if (options.software) {
    SoftwareSettings settings;
    settings.python = options.python;
    settings.import_torch = options.import_torch;
    for (const char* name : {"VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV"}) {
      if (auto found = env.find(name); found != env.end()) settings.env[name] = found->second;
    }
    Append(&own.results, CheckSoftware(host, settings, &software));
  }
  if (options.perf) {
    int stop_signal = 0;
    PerfPlacement meeting{placement.nnodes, placement.node_rank, placement.master_addr, placement.master_port,
                          options.timeout_s};
    Append(&own.results, CheckPerf(host, self_binary, std::max(60.0, options.timeout_s), options.perf_tests,
                                   &stop_signal, meeting));
    if (stop_signal != 0) {
      // What was checked is shown; nothing is judged or written for a run cut short.
      if (!options.json) std::cout << FormatNodeChecks(own) << std::flush;
      return StoppedBySignal(stop_signal, "preflight --perf: stopped by " + io::SignalName(stop_signal) +
                                              " during a benchmark run, which was ended");
    }
  }
  // Facts every node must share.
  own.facts["gpu_count"] = std::to_string(host.gpus.size());
  if (!host.gpus.empty()) own.facts["gpu_model"] = GpuModel(host.gpus.front());
  if (!host.amdgpu_driver_version.empty()) own.facts["driver"] = "amdgpu " + host.amdgpu_driver_version;
  if (!host.nvidia_driver_version.empty()) own.facts["driver"] = "nvidia " + host.nvidia_driver_version;
  if (!software.torch_version.empty()) own.facts["torch"] = software.torch_version;
  if (!software.collective.empty()) own.facts["collective"] = software.collective;

  if (!options.json) std::cout << FormatNodeChecks(own) << std::flush;
  CheckStatus own_status = Worst(own.results);
  std::vector<std::optional<NodeReport>> nodes = {own};
  PreflightVerdict unused;
  if (verdict == nullptr) verdict = &unused;
  verdict->own_fail = own_status == CheckStatus::kFail;
  verdict->job_fail = verdict->own_fail;

  if (placement.nnodes > 1 && placement.node_rank != 0) {
    auto job = SendReport(placement.master_addr, placement.master_port, own, JobToken(env), options.timeout_s);
    if (!job.ok()) return job.error();
    verdict->job_fail = verdict->own_fail || *job == StatusName(CheckStatus::kFail);
    if (options.json) std::cout << ReportJson(nodes) << std::flush;
    else std::cout << fmt::format("node 0 judged the job: {}\n", *job) << std::flush;
    return own_status == CheckStatus::kFail ? 1 : 0;
  }
  if (placement.nnodes > 1) {
    if (placement.master_port <= 0) {
      return UsageError("a multi-node preflight needs MASTER_PORT (--master-port, or a Slurm/Kubernetes job's)",
                        "give --master-port P on every node");
    }
    auto gathered = GatherReports(placement.master_port, placement.nnodes, own, JobToken(env), options.timeout_s);
    if (!gathered.ok()) return gathered.error();
    AddCrossNodeChecks(&*gathered, placement.hosts, options.timeout_s);
    nodes = gathered->nodes;
    SendVerdicts(*gathered, StatusName(JobStatus(nodes)));
    if (!options.json) std::cout << FormatJobSummary(nodes) << std::flush;
  }
  std::vector<std::string> written;
  if (placement.nnodes > 1 || !options.report_dir.empty()) {
    std::string dir = options.report_dir.empty() ? "." : options.report_dir;
    if (Status lists = WriteNodeLists(dir, nodes, &written); !lists) return lists.error();
  }
  if (!options.output_file.empty()) {
    if (Status json = WriteFileAtomic(options.output_file, ReportJson(nodes), kUserOutputMode); !json) return json.error();
    written.push_back(options.output_file);
  }
  if (options.json) std::cout << ReportJson(nodes) << std::flush;
  // With --json, stdout is the JSON alone: what was written is said on stderr.
  for (const std::string& path : written) {
    if (options.json) log::Info("wrote {}", path);
    else std::cout << "wrote " << path << "\n";
  }
  verdict->job_fail = JobStatus(nodes) == CheckStatus::kFail;
  for (const auto& node : nodes) {
    if (node && Worst(node->results) == CheckStatus::kFail) verdict->failing_hosts.push_back(node->host);
  }
  return JobStatus(nodes) == CheckStatus::kFail ? 1 : 0;
}

}  // namespace primus::preflight
