#include "agent/worker_env.h"

#include <algorithm>
#include <csignal>
#include <array>
#include <optional>
#include <set>

#include "agent/launch_spec.h"
#include "hooks/hook_runner.h"
#include "util/files.h"
#include "platform/host_info.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

constexpr std::array<std::string_view, 22> kAgentOwned = {
    "RANK",          "LOCAL_RANK",        "WORLD_SIZE",
    "LOCAL_WORLD_SIZE", "GROUP_RANK",     "GROUP_WORLD_SIZE",
    "ROLE_NAME",     "ROLE_RANK",         "ROLE_WORLD_SIZE",
    "MASTER_ADDR",   "MASTER_PORT",       "TORCHELASTIC_RESTART_COUNT",
    "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE",
    "TORCHELASTIC_ERROR_FILE", "NODE_RANK", "NNODES",
    "PRIMUS_HEARTBEAT_FILE", kLaunchTokenVariable, "PRIMUS_STACK_FILE", "PRIMUS_STACK_SIGNAL",
};

std::string Entry(std::string_view name, std::string_view value) {
  std::string entry;
  entry.reserve(name.size() + 1 + value.size());
  entry.append(name).push_back('=');
  entry.append(value);
  return entry;
}

// Removes NAME's entry from `env` (its only one: the first definition is
// kept when the environment is read); its value, or nullopt when absent.
std::optional<std::string> TakeEntry(std::vector<std::string>& env, std::string_view name) {
  auto found = std::find_if(env.begin(), env.end(), [&](const std::string& entry) {
    return entry.size() > name.size() && entry[name.size()] == '=' && entry.starts_with(name);
  });
  if (found == env.end()) return std::nullopt;
  std::string value = found->substr(name.size() + 1);
  env.erase(found);
  return value;
}

}  // namespace

bool IsAgentOwnedVariable(std::string_view name) {
  return std::find(kAgentOwned.begin(), kAgentOwned.end(), name) != kAgentOwned.end();
}

WorkerEnvironment::WorkerEnvironment(const LaunchPlan& plan, const char* const* agent_environ)
    : plan_(plan) {
  const LaunchSpec& spec = plan.spec;
  std::set<std::string, std::less<>> present;
  std::vector<std::pair<std::string, std::string>> owned_before;
  for (const char* const* entry = agent_environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    std::string_view name = text.substr(0, equals);
    if (name == kJobTokenVariable) continue;  // the agents' secret: no worker needs it
    if (!present.insert(std::string(name)).second) continue;  // first definition wins, like getenv
    if (IsAgentOwnedVariable(name)) {
      owned_before.emplace_back(name, text.substr(equals + 1));
      continue;
    }
    if (spec.env_overrides.count(std::string(name)) > 0) continue;  // replaced below
    shared_.emplace_back(text);
  }
  for (const auto& [name, value] : spec.env_overrides) {
    if (name == kJobTokenVariable) continue;
    present.insert(name);
    shared_.push_back(Entry(name, value));
  }
  auto add_if_unset = [&](std::string_view name, std::string_view value) {
    if (present.insert(std::string(name)).second) shared_.push_back(Entry(name, value));
  };
  for (const auto& [name, value] : spec.env) {
    if (name != kJobTokenVariable) add_if_unset(name, value);
  }
  user_metrics_file_ = present.count(std::string(kMetricsFileVariable)) > 0;
  add_if_unset("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
  add_if_unset("PYTHONUNBUFFERED", "1");
  std::string omp_default = std::to_string(std::max(1, plan.cpu_count / spec.nproc_per_node));
  if (spec.omp_threads == LaunchSpec::OmpThreads::kTorchrun) {
    if (spec.nproc_per_node > 1) add_if_unset("OMP_NUM_THREADS", "1");
  } else if (!spec.placements.empty() && present.count("OMP_NUM_THREADS") == 0) {
    omp_default_ = omp_default;  // set per worker, from its placement
  } else {
    add_if_unset("OMP_NUM_THREADS", omp_default);
  }

  std::vector<std::pair<std::string_view, std::string>> launch_wide = {
      {"WORLD_SIZE", std::to_string(plan.world_size())},
      {"LOCAL_WORLD_SIZE", std::to_string(spec.nproc_per_node)},
      {"GROUP_RANK", std::to_string(spec.node_rank)},
      {"GROUP_WORLD_SIZE", std::to_string(spec.nnodes)},
      {"NODE_RANK", std::to_string(spec.node_rank)},
      {"NNODES", std::to_string(spec.nnodes)},
      {"ROLE_NAME", spec.role},
      {"ROLE_WORLD_SIZE", std::to_string(plan.world_size())},
      {"MASTER_ADDR", spec.master_addr},
      {"MASTER_PORT", std::to_string(spec.master_port)},
      {"TORCHELASTIC_MAX_RESTARTS", std::to_string(spec.max_restarts)},
      {"TORCHELASTIC_RUN_ID", spec.run_id},
      {"TORCHELASTIC_USE_AGENT_STORE", "False"},
      {kLaunchTokenVariable, plan.token},
  };
  for (const auto& [name, value] : launch_wide) shared_.push_back(Entry(name, value));
  AddFrameworkVariables();
  AddStackDumper();
  if (spec.flight_recorder) {
    // The user's own values stay, under either name (newer releases read
    // TORCH_FR_* first); where the dumps go is read from them then.
    std::string user_size = SharedValue("TORCH_FR_BUFFER_SIZE");
    if (user_size.empty()) add_if_unset("TORCH_NCCL_TRACE_BUFFER_SIZE", "2000");
    if (user_size.empty()) user_size = SharedValue("TORCH_NCCL_TRACE_BUFFER_SIZE");
    add_if_unset("TORCH_NCCL_DUMP_ON_TIMEOUT", "1");
    flight_recorder_ = user_size != "0";
    user_flight_dump_prefix_ = SharedValue("TORCH_FR_DUMP_TEMP_FILE");
    if (user_flight_dump_prefix_.empty()) user_flight_dump_prefix_ = SharedValue("TORCH_NCCL_DEBUG_INFO_TEMP_FILE");
    user_flight_pipe_prefix_ = SharedValue("TORCH_NCCL_DEBUG_INFO_PIPE_FILE");
  }

  for (auto& [name, value] : owned_before) {
    const std::string& key = name;  // a structured binding cannot be captured (clang 14)
    auto same = std::find_if(launch_wide.begin(), launch_wide.end(),
                             [&key](const auto& item) { return item.first == key; });
    if (same == launch_wide.end() || same->second != value) replaced_.emplace_back(name, value);
  }
}

std::string WorkerEnvironment::FlightDumpFile(const std::string& prefix, int rank) const {
  if (!flight_recorder_) return "";
  return (user_flight_dump_prefix_.empty() ? prefix : user_flight_dump_prefix_) + std::to_string(rank);
}

std::string WorkerEnvironment::FlightPipeFile(const std::string& prefix, int rank) const {
  if (!flight_recorder_) return "";
  return (user_flight_pipe_prefix_.empty() ? prefix : user_flight_pipe_prefix_) + std::to_string(rank) + ".pipe";
}

std::string WorkerEnvironment::SharedValue(std::string_view name) const {
  for (const std::string& entry : shared_) {
    if (entry.size() > name.size() && entry[name.size()] == '=' && std::string_view(entry).starts_with(name)) {
      return entry.substr(name.size() + 1);
    }
  }
  return "";
}

Environment WorkerEnvironment::SharedValues(const std::vector<std::string>& names) const {
  Environment values;
  for (const std::string& entry : shared_) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    std::string name = entry.substr(0, equals);
    if (std::find(names.begin(), names.end(), name) != names.end()) values[name] = entry.substr(equals + 1);
  }
  return values;
}

int StackSignal() { return SIGRTMIN + 5; }

void WorkerEnvironment::AddStackDumper() {
  if (!plan_.spec.stack_dumper) return;
  std::string dumper = hooks::PythonApiFile("primus_stacks/sitecustomize.py");
  if (dumper.empty()) return;
  // First on PYTHONPATH; the user's entries follow (and their sitecustomize is chained).
  std::string path = DirName(dumper);
  if (std::optional<std::string> rest = TakeEntry(shared_, "PYTHONPATH"); rest && !rest->empty()) path += ":" + *rest;
  shared_.push_back(Entry("PYTHONPATH", path));
  shared_.push_back(Entry("PRIMUS_STACK_SIGNAL", std::to_string(StackSignal())));
  stack_dumper_ = true;
}

bool WorkerEnvironment::WantsFramework(std::string_view name) const {
  const std::vector<std::string>& wanted = plan_.spec.framework_env;
  return std::find(wanted.begin(), wanted.end(), name) != wanted.end();
}

// Asked for by name (direct.framework_env), these are the agent's: a value
// the agent's environment had is replaced (said at debug level).
void WorkerEnvironment::AddFrameworkVariables() {
  const LaunchSpec& spec = plan_.spec;
  std::vector<std::pair<std::string, std::string>> variables;
  if (WantsFramework("jax")) {
    // jax.distributed.initialize() reads JAX_COORDINATOR_ADDRESS itself; the
    // count and id under the names scripts and launchers use for them.
    std::string world = std::to_string(plan_.world_size());
    variables = {{"JAX_COORDINATOR_ADDRESS", spec.master_addr + ":" + std::to_string(spec.master_port)},
                 {"JAX_NUM_PROCESSES", world},
                 {"JAX_PROCESS_COUNT", world}};
  }
  // Per worker (For) or shared (here): the agent's value replaces the environment's.
  for (const char* name : {"JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_COUNT", "JAX_PROCESS_ID",
                           "JAX_PROCESS_INDEX", "JAX_LOCAL_DEVICE_IDS", "TF_CONFIG"}) {
    bool ours = std::string_view(name) == "TF_CONFIG" ? WantsFramework("tensorflow") : WantsFramework("jax");
    if (!ours) continue;
    if (std::optional<std::string> before = TakeEntry(shared_, name)) replaced_.emplace_back(name, *before);
  }
  for (const auto& [name, value] : variables) shared_.push_back(Entry(name, value));
  if (WantsFramework("tensorflow")) {
    // MultiWorkerMirroredStrategy's cluster: every worker of every node, each
    // on master port + 2 + its local rank of its node's address.
    std::vector<std::string> hosts = plan_.node_hosts;
    if (hosts.size() != static_cast<size_t>(spec.nnodes)) hosts.assign(static_cast<size_t>(spec.nnodes), spec.master_addr);
    std::string workers;
    for (const std::string& host : hosts) {
      std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;  // IPv6
      for (int local = 0; local < spec.nproc_per_node; ++local) {
        if (!workers.empty()) workers += ",";
        workers += "\"" + shown + ":" + std::to_string(spec.master_port + 2 + local) + "\"";
      }
    }
    tf_cluster_ = "{\"cluster\": {\"worker\": [" + workers + "]}, \"task\": {\"type\": \"worker\", \"index\": ";
  }
}

std::string WorkerEnvironment::VirtualDevice(int local_rank) const {
  std::string list = SharedValue("CUDA_VISIBLE_DEVICES");
  if (list.empty()) return std::to_string(local_rank);
  std::vector<std::string> devices = Split(list, ',');
  if (local_rank < 0 || static_cast<size_t>(local_rank) >= devices.size()) return "";
  return std::string(Trim(devices[static_cast<size_t>(local_rank)]));
}

std::vector<std::string> WorkerEnvironment::For(const WorkerSlot& slot) const {
  std::vector<std::string> env;
  env.reserve(shared_.size() + 8);
  env = shared_;
  int rank = plan_.global_rank(slot.local_rank);
  env.push_back(Entry("RANK", std::to_string(rank)));
  if (plan_.spec.virtual_local_rank) {
    // torchrun's virtual mode: each worker's GPU is its device 0.
    TakeEntry(env, "CUDA_VISIBLE_DEVICES");
    env.push_back(Entry("CUDA_VISIBLE_DEVICES", VirtualDevice(slot.local_rank)));
    env.push_back(Entry("LOCAL_RANK", "0"));
  } else {
    env.push_back(Entry("LOCAL_RANK", std::to_string(slot.local_rank)));
  }
  env.push_back(Entry("ROLE_RANK", std::to_string(rank)));
  env.push_back(Entry("TORCHELASTIC_RESTART_COUNT", std::to_string(slot.restart_count)));
  if (WantsFramework("jax")) {
    env.push_back(Entry("JAX_PROCESS_ID", std::to_string(rank)));
    env.push_back(Entry("JAX_PROCESS_INDEX", std::to_string(rank)));
    // One process per GPU: each its own device, as jax.distributed expects.
    bool gpus = plan_.spec.host != nullptr && !plan_.spec.host->gpus.empty();
    if (gpus && plan_.spec.nproc_per_node > 1 && !plan_.spec.virtual_local_rank) {
      env.push_back(Entry("JAX_LOCAL_DEVICE_IDS", std::to_string(slot.local_rank)));
    }
  }
  if (!tf_cluster_.empty()) env.push_back(Entry("TF_CONFIG", tf_cluster_ + std::to_string(rank) + "}}"));
  env.push_back(Entry("TORCHELASTIC_ERROR_FILE", slot.error_file));
  env.push_back(Entry("PRIMUS_HEARTBEAT_FILE", slot.heartbeat_file));
  if (stack_dumper_ && !slot.stack_file.empty()) env.push_back(Entry("PRIMUS_STACK_FILE", slot.stack_file));
  if (flight_recorder_ && !slot.flight_prefix.empty()) {
    if (user_flight_dump_prefix_.empty()) env.push_back(Entry("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", slot.flight_prefix));
    if (user_flight_pipe_prefix_.empty()) env.push_back(Entry("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", slot.flight_prefix));
  }
  if (!user_metrics_file_ && !slot.metrics_file.empty()) env.push_back(Entry(kMetricsFileVariable, slot.metrics_file));
  if (!omp_default_.empty()) {
    const WorkerPlacement& placement = plan_.spec.placements[static_cast<size_t>(slot.local_rank)];
    env.push_back(Entry("OMP_NUM_THREADS", placement.omp_num_threads > 0 ? std::to_string(placement.omp_num_threads)
                                                                          : omp_default_));
  }
  return env;
}

}  // namespace primus::agent
