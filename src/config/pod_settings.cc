// DetectPod: a Kubernetes pod's distributed settings under one of three
// in-pod conventions (docs/k8s.md has the tables):
//
//   pytorchjob  Kubeflow's PyTorchJob (training-operator v1) and TrainJob
//               (Trainer v2): PET_NNODES, PET_NODE_RANK (or RANK, the pod's
//               index), PET_NPROC_PER_NODE, PET_MASTER_ADDR/MASTER_ADDR,
//               PET_MASTER_PORT/MASTER_PORT. WORLD_SIZE counts processes
//               there (pods x nprocPerNode; pods for older operators and for
//               nprocPerNode auto). Elastic jobs carry PET_RDZV_ENDPOINT
//               instead of a master and no rank: the rank comes from the pod's
//               host name `<job>-worker-<i>`.
//   jobset      an Indexed Job or a JobSet: JOB_COMPLETION_INDEX is the node
//               rank; the node count comes from PRIMUS_DIRECT_NNODES (what
//               `primus-cli k8s manifest` sets) or WORLD_SIZE; the master from
//               PRIMUS_DIRECT_MASTER_ADDR, MASTER_ADDR, or JobSet's stable
//               name `<jobset>-<replicatedjob>-0-0.<jobset>`.
//   platform    the commercial platforms of the seeds: WORLD_SIZE = number of
//               nodes, RANK = node index, MASTER_ADDR, MASTER_PORT.
//
// auto picks the first whose evidence is present, in that order. Variables
// that contradict each other are an error (code 4) naming them, never a
// guess; so is a convention asked for by name whose variables are missing.
#include <algorithm>
#include <cctype>

#include "config/launcher_config.h"
#include "config/scheduler_settings.h"
#include "util/strings.h"

namespace primus::config {
namespace {

// The port for conventions that name no port (torchrun's default too).
constexpr int kDefaultMasterPort = 29500;

const char* const kConventionHint =
    "check the pod's environment (kubectl exec ... -- env), or choose the convention with "
    "--platform auto|pytorchjob|jobset|platform (none ignores the pod's variables; give --nnodes, "
    "--node-rank, --master-addr and --master-port yourself)";


std::string Assignment(std::string_view name, std::string_view value) {
  return std::string(name) + "=" + std::string(value);
}

Error PodError(std::string_view convention, const std::string& message) {
  return Error{ExitCode::kUnavailable, std::string(convention) + " pod: " + message, kConventionHint};
}

// A whole number in [minimum, maximum]; the error names the variable.
Result<int64_t> ReadNumber(std::string_view convention, std::string_view name, const std::string& text,
                           int64_t minimum, int64_t maximum, std::string_view meaning) {
  std::optional<int64_t> number = ParseInt(text);
  if (!number) {
    return PodError(convention, Assignment(name, text) + " is not a number (" + std::string(meaning) + ")");
  }
  if (*number < minimum || *number > maximum) {
    return PodError(convention, Assignment(name, text) + " is out of range (" + std::string(meaning) + ": " +
                                    std::to_string(minimum) + " to " + std::to_string(maximum) + ")");
  }
  return *number;
}

Result<int64_t> ReadPort(std::string_view convention, std::string_view name, const std::string& text) {
  return ReadNumber(convention, name, text, 1, 65535, "a TCP port");
}

void Add(SchedulerSettings* found, std::string key, std::string value, std::string variables) {
  found->settings.push_back({std::move(key), std::move(value), std::move(variables)});
}

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A value the environment layer gives this key (PRIMUS_DIRECT_*, PET_*), which
// wins over whatever the convention derives: {variable, value}.
std::optional<std::pair<std::string, std::string>> EnvironmentLayerValue(const Environment& env,
                                                                         std::string_view key) {
  std::vector<std::string> variables = EnvironmentVariablesFor(key);  // lowest precedence first
  for (auto it = variables.rbegin(); it != variables.rend(); ++it) {
    if (std::optional<std::string> value = PresentVariable(env, *it)) return std::pair{*it, *value};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- pytorchjob

// "host:port" of PET_RDZV_ENDPOINT.
struct Endpoint {
  std::string host;
  std::string port;
};

std::optional<Endpoint> RendezvousEndpoint(const Environment& env) {
  std::optional<std::string> text = PresentVariable(env, "PET_RDZV_ENDPOINT");
  if (!text) return std::nullopt;
  size_t colon = text->rfind(':');
  if (colon == std::string::npos) return Endpoint{*text, ""};
  return Endpoint{text->substr(0, colon), text->substr(colon + 1)};
}

// An elastic PyTorchJob names no rank; its pods are `<job>-worker-<i>` and
// the rendezvous host is `<job>-worker-0`, so the host name gives the index.
std::optional<int64_t> RankFromHostName(const Environment& env, const std::optional<Endpoint>& endpoint) {
  std::optional<std::string> hostname = PresentVariable(env, "HOSTNAME");
  if (!hostname || !endpoint || !endpoint->host.ends_with("-0")) return std::nullopt;
  std::string prefix = endpoint->host.substr(0, endpoint->host.size() - 1);  // "<job>-worker-"
  if (!hostname->starts_with(prefix)) return std::nullopt;
  std::string index = hostname->substr(prefix.size());
  if (!AllDigits(index)) return std::nullopt;
  return ParseInt(index);
}

// PET_NNODES: "4", or an elastic "MIN:MAX".
struct NodeCount {
  int64_t minimum = 1, maximum = 1;
};
Result<NodeCount> ReadNodeCount(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) {
    auto count = ReadNumber("pytorchjob", "PET_NNODES", text, 1, 1 << 20, "the number of pods");
    if (!count.ok()) return count.error();
    return NodeCount{*count, *count};
  }
  std::optional<int64_t> low = ParseInt(text.substr(0, colon)), high = ParseInt(text.substr(colon + 1));
  if (!low || !high || *low < 1 || *high < *low || *high > (1 << 20)) {
    return PodError("pytorchjob", Assignment("PET_NNODES", text) + " is neither a number nor a MIN:MAX range");
  }
  return NodeCount{*low, *high};
}

// An elastic PyTorchJob (elasticPolicy minReplicas < maxReplicas): the pods
// meet at PET_RDZV_ENDPOINT, whose pod coordinates and hands node ranks out.
Result<SchedulerSettings> ElasticPyTorchJob(const Environment& env, const NodeCount& count, SchedulerSettings found) {
  std::optional<Endpoint> endpoint = RendezvousEndpoint(env);
  if (!endpoint || endpoint->host.empty() || endpoint->port.empty()) {
    return PodError("pytorchjob", "PET_NNODES=" + *PresentVariable(env, "PET_NNODES") +
                                      " is an elastic range, but PET_RDZV_ENDPOINT (HOST:PORT) is not set");
  }
  Add(&found, "direct.nnodes", std::to_string(count.maximum), "PET_NNODES");
  Add(&found, "direct.min_nnodes", std::to_string(count.minimum), "PET_NNODES");
  Add(&found, "direct.rendezvous", "c10d", "PET_NNODES");
  Add(&found, "direct.master_addr", endpoint->host, "PET_RDZV_ENDPOINT");
  Add(&found, "direct.control_port", endpoint->port, "PET_RDZV_ENDPOINT");
  if (std::optional<std::string> nproc = PresentVariable(env, "PET_NPROC_PER_NODE")) {
    Add(&found, "direct.nproc_per_node", *nproc, "PET_NPROC_PER_NODE");
  }
  return found;
}

Result<SchedulerSettings> DetectPyTorchJob(const Environment& env) {
  SchedulerSettings found;
  found.scheduler = "pytorchjob";
  std::optional<std::string> nnodes_text = PresentVariable(env, "PET_NNODES");
  if (!nnodes_text) {
    return Error{ExitCode::kUnavailable, "direct.platform is pytorchjob, but PET_NNODES is not set",
                 "a training-operator older than v1.7 sets only WORLD_SIZE (= pods), RANK and MASTER_ADDR/PORT: "
                 "use --platform platform there; outside a PyTorchJob use --platform auto"};
  }
  Result<NodeCount> count = ReadNodeCount(*nnodes_text);
  if (!count.ok()) return count.error();
  if (count->minimum != count->maximum) return ElasticPyTorchJob(env, *count, std::move(found));
  const int64_t* nnodes = &count->maximum;
  Add(&found, "direct.nnodes", std::to_string(*nnodes), "PET_NNODES");

  std::optional<std::string> nproc = PresentVariable(env, "PET_NPROC_PER_NODE");
  if (nproc) Add(&found, "direct.nproc_per_node", *nproc, "PET_NPROC_PER_NODE");

  // The node rank: PET_NODE_RANK, else RANK (the pod's index when the job has
  // a Master), else an elastic worker's host name.
  std::optional<std::string> pet_rank = PresentVariable(env, "PET_NODE_RANK"), rank = PresentVariable(env, "RANK");
  std::optional<Endpoint> endpoint = RendezvousEndpoint(env);
  std::optional<int64_t> node_rank;
  std::string rank_variables;
  if (pet_rank) {
    Result<int64_t> value = ReadNumber("pytorchjob", "PET_NODE_RANK", *pet_rank, 0, *nnodes - 1,
                                       "this pod's index, below PET_NNODES=" + *nnodes_text);
    if (!value.ok()) return value.error();
    node_rank = *value;
    rank_variables = "PET_NODE_RANK";
  }
  if (rank) {
    Result<int64_t> value = ReadNumber("pytorchjob", "RANK", *rank, 0, *nnodes - 1,
                                       "this pod's index, below PET_NNODES=" + *nnodes_text);
    if (!value.ok()) return value.error();
    if (node_rank && *node_rank != *value) {
      return PodError("pytorchjob", Assignment("PET_NODE_RANK", *pet_rank) + " and " + Assignment("RANK", *rank) +
                                        " disagree (both are this pod's index in a PyTorchJob)");
    }
    if (!node_rank) {
      node_rank = *value;
      rank_variables = "RANK";
    }
  }
  if (!node_rank) {
    if (std::optional<int64_t> from_host = RankFromHostName(env, endpoint)) {
      if (*from_host >= *nnodes) {
        return PodError("pytorchjob", "the host name " + *PresentVariable(env, "HOSTNAME") + " gives index " +
                                          std::to_string(*from_host) + ", not below " +
                                          Assignment("PET_NNODES", *nnodes_text));
      }
      node_rank = *from_host;
      rank_variables = "HOSTNAME, PET_RDZV_ENDPOINT";
    } else if (*nnodes == 1) {
      node_rank = 0;
      rank_variables = "PET_NNODES";
    } else {
      return PodError("pytorchjob", "no node rank: none of PET_NODE_RANK, RANK is set, and the host name does not "
                                    "follow the rendezvous host of PET_RDZV_ENDPOINT (<job>-worker-<i>)");
    }
  }
  Add(&found, "direct.node_rank", std::to_string(*node_rank), rank_variables);

  // WORLD_SIZE counts processes: pods x nprocPerNode (pods when nprocPerNode
  // is not a number, and for operators before v1.7).
  if (std::optional<std::string> world = PresentVariable(env, "WORLD_SIZE")) {
    Result<int64_t> processes = ReadNumber("pytorchjob", "WORLD_SIZE", *world, 1, INT32_MAX, "processes in the job");
    if (!processes.ok()) return processes.error();
    std::optional<int64_t> per_node = nproc ? ParseInt(*nproc) : std::nullopt;
    bool consistent = *processes == *nnodes || (per_node && *processes == *nnodes * *per_node);
    if (!consistent) {
      return PodError("pytorchjob", Assignment("WORLD_SIZE", *world) + " is neither " +
                                        Assignment("PET_NNODES", *nnodes_text) + " pods nor pods x " +
                                        Assignment("PET_NPROC_PER_NODE", nproc.value_or("(unset)")) + " processes");
    }
  }

  // The master: PET_MASTER_* (newer operators, Trainer v2), MASTER_* (every
  // PyTorchJob with a Master), or an elastic job's rendezvous endpoint.
  std::optional<std::string> addr;
  std::string addr_variable;
  for (const char* name : {"PET_MASTER_ADDR", "MASTER_ADDR"}) {
    if (!addr && (addr = PresentVariable(env, name))) addr_variable = name;
  }
  if (!addr && endpoint && !endpoint->host.empty()) {
    addr = endpoint->host;
    addr_variable = "PET_RDZV_ENDPOINT";
  }
  std::optional<std::string> port;
  std::string port_variable;
  for (const char* name : {"PET_MASTER_PORT", "MASTER_PORT"}) {
    if (!port && (port = PresentVariable(env, name))) port_variable = name;
  }
  if (!port && endpoint && !endpoint->port.empty()) {
    port = endpoint->port;
    port_variable = "PET_RDZV_ENDPOINT";
  }
  if (*nnodes > 1 && !addr) {
    return PodError("pytorchjob", "PET_NNODES=" + *nnodes_text +
                                      " but no master address: none of PET_MASTER_ADDR, MASTER_ADDR, "
                                      "PET_RDZV_ENDPOINT is set");
  }
  if (*nnodes > 1 && !port) {
    return PodError("pytorchjob", "PET_NNODES=" + *nnodes_text +
                                      " but no master port: none of PET_MASTER_PORT, MASTER_PORT, "
                                      "PET_RDZV_ENDPOINT (host:port) is set");
  }
  if (addr) Add(&found, "direct.master_addr", *addr, addr_variable);
  if (port) {
    Result<int64_t> value = ReadPort("pytorchjob", port_variable, *port);
    if (!value.ok()) return value.error();
    Add(&found, "direct.master_port", std::to_string(*value), port_variable);
  }

  // The job's name: MASTER_ADDR is `<job>-master-0`, the rendezvous host
  // `<job>-worker-0`.
  for (const char* suffix : {"-master-0", "-worker-0"}) {
    if (addr && addr->ends_with(suffix) && found.job_id.empty()) {
      found.job_id = addr->substr(0, addr->size() - std::string_view(suffix).size());
    }
  }
  return found;
}

// ------------------------------------------------------------------- jobset

Result<SchedulerSettings> DetectJobSet(const Environment& env) {
  SchedulerSettings found;
  found.scheduler = "jobset";
  std::optional<std::string> index_text = PresentVariable(env, "JOB_COMPLETION_INDEX");
  if (!index_text) {
    return Error{ExitCode::kUnavailable, "direct.platform is jobset, but JOB_COMPLETION_INDEX is not set",
                 "run in an Indexed Job or a JobSet (completionMode: Indexed), or use --platform auto"};
  }
  Result<int64_t> index = ReadNumber("jobset", "JOB_COMPLETION_INDEX", *index_text, 0, 1 << 20,
                                     "this pod's completion index");
  if (!index.ok()) return index.error();
  if (std::optional<std::string> job_index = PresentVariable(env, "JOB_INDEX"); job_index && *job_index != "0") {
    return Error{ExitCode::kUnavailable,
                 "jobset pod: " + Assignment("JOB_INDEX", *job_index) +
                     ": this pod is in a later Job of its replicated job, where JOB_COMPLETION_INDEX starts at 0 "
                     "again, so it does not give a node rank",
                 "run one Job per replicated job (replicas: 1, completions = parallelism = nodes), or give "
                 "--node-rank yourself with --platform none"};
  }

  // The node count: what the manifest set (PRIMUS_DIRECT_NNODES, or PET_NNODES
  // in a TrainJob), else WORLD_SIZE (= nodes, as the seeds' platforms set it).
  int64_t nnodes = 0;
  std::string nnodes_from;
  if (auto given = EnvironmentLayerValue(env, "direct.nnodes")) {
    Result<int64_t> value = ReadNumber("jobset", given->first, given->second, 1, 1 << 20, "the number of nodes");
    if (!value.ok()) return value.error();
    nnodes = *value;
    nnodes_from = Assignment(given->first, given->second);
  } else if (std::optional<std::string> world = PresentVariable(env, "WORLD_SIZE")) {
    Result<int64_t> value = ReadNumber("jobset", "WORLD_SIZE", *world, 1, 1 << 20, "the number of nodes");
    if (!value.ok()) return value.error();
    nnodes = *value;
    nnodes_from = Assignment("WORLD_SIZE", *world);
    Add(&found, "direct.nnodes", std::to_string(nnodes), "WORLD_SIZE");
  } else {
    return PodError("jobset", "JOB_COMPLETION_INDEX=" + *index_text +
                                  " gives the node rank, but nothing gives the number of nodes: set "
                                  "PRIMUS_DIRECT_NNODES (or WORLD_SIZE) in the pod spec to the Job's completions "
                                  "(`primus-cli k8s manifest` does)");
  }
  if (*index >= nnodes) {
    return PodError("jobset", Assignment("JOB_COMPLETION_INDEX", *index_text) + " is not below " + nnodes_from +
                                  " (the number of nodes)");
  }
  if (std::optional<std::string> rank = PresentVariable(env, "RANK"); rank && *rank != std::to_string(*index)) {
    return PodError("jobset", Assignment("JOB_COMPLETION_INDEX", *index_text) + " and " + Assignment("RANK", *rank) +
                                  " disagree about this pod's node rank");
  }
  Add(&found, "direct.node_rank", std::to_string(*index), "JOB_COMPLETION_INDEX");

  // The master: given in the pod spec, else JobSet's stable host name for
  // the first pod of the first Job (the JobSet's subdomain defaults to its name).
  std::optional<std::string> jobset = PresentVariable(env, "JOBSET_NAME");
  std::optional<std::string> replicated_job = PresentVariable(env, "REPLICATED_JOB_NAME");
  bool have_addr = EnvironmentLayerValue(env, "direct.master_addr").has_value();
  if (!have_addr) {
    if (std::optional<std::string> addr = PresentVariable(env, "MASTER_ADDR")) {
      Add(&found, "direct.master_addr", *addr, "MASTER_ADDR");
      have_addr = true;
    } else if (jobset && replicated_job) {
      Add(&found, "direct.master_addr", *jobset + "-" + *replicated_job + "-0-0." + *jobset,
          "JOBSET_NAME, REPLICATED_JOB_NAME");
      have_addr = true;
    }
  }
  if (nnodes > 1 && !have_addr) {
    return PodError("jobset", nnodes_from +
                                  " but no master address: set PRIMUS_DIRECT_MASTER_ADDR (or MASTER_ADDR) to the "
                                  "first pod's stable name, <job>-0.<headless service>; in a JobSet, JOBSET_NAME and "
                                  "REPLICATED_JOB_NAME give it");
  }
  if (!EnvironmentLayerValue(env, "direct.master_port")) {
    if (std::optional<std::string> port = PresentVariable(env, "MASTER_PORT")) {
      Result<int64_t> value = ReadPort("jobset", "MASTER_PORT", *port);
      if (!value.ok()) return value.error();
      Add(&found, "direct.master_port", std::to_string(*value), "MASTER_PORT");
    } else if (nnodes > 1) {
      Add(&found, "direct.master_port", std::to_string(kDefaultMasterPort), "default (no MASTER_PORT)");
    }
  }

  // The job's name: JOBSET_NAME, or an Indexed Job pod's host name `<job>-<index>`.
  std::optional<std::string> hostname = PresentVariable(env, "HOSTNAME");
  std::string index_suffix = "-" + std::to_string(*index);
  if (jobset) found.job_id = *jobset;
  else if (hostname && hostname->ends_with(index_suffix) && hostname->size() > index_suffix.size()) {
    found.job_id = hostname->substr(0, hostname->size() - index_suffix.size());
  }
  return found;
}

// ----------------------------------------------------------------- platform

Result<SchedulerSettings> DetectPlatform(const Environment& env, bool requested) {
  SchedulerSettings found;
  found.scheduler = "platform";
  std::vector<std::string> missing;
  for (const char* name : {"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"}) {
    if (!PresentVariable(env, name) && (requested || std::string_view(name) != "MASTER_PORT")) missing.push_back(name);
  }
  if (!missing.empty()) {
    return Error{ExitCode::kUnavailable,
                 "direct.platform is platform, but " + Join(missing, ", ") + (missing.size() == 1 ? " is" : " are") +
                     " not set (the platform convention: WORLD_SIZE = number of nodes, RANK = node index, "
                     "MASTER_ADDR, MASTER_PORT)",
                 kConventionHint};
  }
  std::string world = *PresentVariable(env, "WORLD_SIZE"), rank = *PresentVariable(env, "RANK");
  Result<int64_t> nnodes = ReadNumber("platform", "WORLD_SIZE", world, 1, 1 << 20, "the number of nodes");
  if (!nnodes.ok()) return nnodes.error();
  Result<int64_t> node_rank = ReadNumber("platform", "RANK", rank, 0, INT32_MAX, "this node's index");
  if (!node_rank.ok()) return node_rank.error();
  if (*node_rank >= *nnodes) {
    return PodError("platform", Assignment("RANK", rank) + " is not below " + Assignment("WORLD_SIZE", world) +
                                    " (RANK is this node's index, WORLD_SIZE the number of nodes)");
  }
  Add(&found, "direct.nnodes", world, "WORLD_SIZE");
  Add(&found, "direct.node_rank", rank, "RANK");
  Add(&found, "direct.master_addr", *PresentVariable(env, "MASTER_ADDR"), "MASTER_ADDR");
  if (std::optional<std::string> port = PresentVariable(env, "MASTER_PORT")) {
    Result<int64_t> value = ReadPort("platform", "MASTER_PORT", *port);
    if (!value.ok()) return value.error();
    Add(&found, "direct.master_port", std::to_string(*value), "MASTER_PORT");
  } else {
    Add(&found, "direct.master_port", std::to_string(kDefaultMasterPort), "default (no MASTER_PORT)");
  }
  return found;
}

// The evidence auto looks for, in order.
bool LooksLikePyTorchJob(const Environment& env) {
  return PresentVariable(env, "PET_NNODES") &&
         (PresentVariable(env, "PET_MASTER_ADDR") || PresentVariable(env, "MASTER_ADDR") || PresentVariable(env, "PET_RDZV_ENDPOINT"));
}
bool LooksLikeJobSet(const Environment& env) {
  return PresentVariable(env, "JOB_COMPLETION_INDEX") &&
         (EnvironmentLayerValue(env, "direct.nnodes") || PresentVariable(env, "WORLD_SIZE") || PresentVariable(env, "JOBSET_NAME"));
}
bool LooksLikePlatform(const Environment& env) {
  return PresentVariable(env, "WORLD_SIZE") && PresentVariable(env, "RANK") && PresentVariable(env, "MASTER_ADDR");
}

}  // namespace

Result<SchedulerSettings> DetectPod(const Environment& env, std::string_view platform) {
  if (platform == "pytorchjob") return DetectPyTorchJob(env);
  if (platform == "jobset") return DetectJobSet(env);
  if (platform == "platform") return DetectPlatform(env, /*requested=*/true);
  if (platform != "auto") {
    return UsageError("direct.platform '" + std::string(platform) + "' is not a pod convention",
                      "use one of auto, pytorchjob, jobset, platform");
  }
  if (LooksLikePyTorchJob(env)) return DetectPyTorchJob(env);
  if (LooksLikeJobSet(env)) return DetectJobSet(env);
  if (LooksLikePlatform(env)) return DetectPlatform(env, /*requested=*/false);
  return SchedulerSettings{};
}

}  // namespace primus::config
