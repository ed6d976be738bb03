// The environment each worker starts with: the agent's own environment with
// spec.env_overrides (the user's explicit --env) on top, then spec.env and the
// tuning defaults only where that lacks them (a variable the user exported is
// never overwritten by a default), then the distributed variables, which
// belong to the agent and always win (torchrun's contract; a platform's
// RANK=<node index> must not leak into a worker). PRIMUS_JOB_TOKEN, the
// secret with which the agents of a job recognise each other, is never
// passed on: a worker has no use for it, and whatever a worker runs or
// dumps must not learn it. Built once per launch; per
// worker only seven variables differ (PRIMUS_METRICS_FILE, docs/monitor.md, is
// one unless the user set it), seven with --numa-bind: a bound rank's
// OMP_NUM_THREADS is its share of its CPUs, unless the user set the variable
// (or torchrun's rule was asked for: 1 with several workers, LaunchSpec::omp_threads).
// direct.framework_env adds other frameworks' variables: jax gives
// JAX_COORDINATOR_ADDRESS (MASTER_ADDR:MASTER_PORT), JAX_NUM_PROCESSES and
// JAX_PROCESS_COUNT (the world size), JAX_PROCESS_ID and JAX_PROCESS_INDEX
// (the rank), and JAX_LOCAL_DEVICE_IDS (the local rank, with several
// workers on a GPU node); tensorflow gives TF_CONFIG, MultiWorkerMirrored-
// Strategy's cluster of every worker (node address : master port + 2 +
// local rank) and this worker's task index.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/launch_plan.h"
#include "util/environment.h"

namespace primus::agent {

// True for the variables the agent sets per launch or per worker (RANK,
// WORLD_SIZE, MASTER_ADDR, TORCHELASTIC_*, PRIMUS_HEARTBEAT_FILE, ...).
bool IsAgentOwnedVariable(std::string_view name);

// The variable that carries the launch token; the orphan guard kills what
// carries it after the agent dies.
inline constexpr std::string_view kLaunchTokenVariable = "PRIMUS_LAUNCH_TOKEN";
// Where each worker may write its training metrics (docs/monitor.md).
inline constexpr std::string_view kMetricsFileVariable = "PRIMUS_METRICS_FILE";

struct WorkerSlot {
  int local_rank = 0;
  int restart_count = 0;
  std::string error_file;
  std::string heartbeat_file;
  std::string metrics_file{};  // PRIMUS_METRICS_FILE, unless the user set it ("": none)
  std::string stack_file{};    // PRIMUS_STACK_FILE: where the stack dumper writes ("": none)
  // The flight recorder's file prefix in the attempt directory: the dump is
  // <prefix><rank>, the debug pipe <prefix><rank>.pipe ("": none).
  std::string flight_prefix{};
};

// The flight recorder's files in the attempt directory: <prefix><rank> (the
// dump) and <prefix><rank>.pipe (its debug pipe), PyTorch's own default names.
inline constexpr const char* kFlightRecordPrefix = "nccl_trace_rank_";

// The signal on which a worker's stack dumper writes its stacks: a real-time
// signal no launcher forwards and no framework uses (SIGRTMIN + 5).
int StackSignal();

class WorkerEnvironment {
 public:
  // `agent_environ`: the agent's environment as "K=V" strings (environ).
  WorkerEnvironment(const LaunchPlan& plan, const char* const* agent_environ);

  // Whether the workers load the stack dumper (spec.stack_dumper, and python/primus_stacks found).
  bool stack_dumper() const { return stack_dumper_; }
  // Where rank `rank`'s flight recorder dumps and its debug pipe are, given
  // the slot's prefix: the user's TORCH_NCCL_DEBUG_INFO_TEMP_FILE / _PIPE_FILE
  // where set, else ours; "" when the recorder is off (direct.flight_recorder,
  // or the user's TORCH_NCCL_TRACE_BUFFER_SIZE=0).
  std::string FlightDumpFile(const std::string& prefix, int rank) const;
  std::string FlightPipeFile(const std::string& prefix, int rank) const;
  // The full "K=V" list for one worker.
  std::vector<std::string> For(const WorkerSlot& slot) const;

  // Agent-owned variables the agent's environment set to another value,
  // as (name, old value): reported at debug level.
  const std::vector<std::pair<std::string, std::string>>& replaced() const { return replaced_; }
  // The user set PRIMUS_METRICS_FILE: the workers keep theirs, and the agent does not know where they write.
  bool user_metrics_file() const { return user_metrics_file_; }
  // A variable every worker of this node gets the same value of (the user's
  // --env, else the agent's environment, else the plan's default), as the
  // workers see it; "" when they do not get it.
  std::string SharedValue(std::string_view name) const;
  // Those of `names` the workers get, with their values (an empty one too).
  Environment SharedValues(const std::vector<std::string>& names) const;
  // With spec.virtual_local_rank: the one device a worker sees as
  // CUDA_VISIBLE_DEVICES, the shared list's entry at its local rank (the
  // local rank itself without a list); "" when the list is too short.
  std::string VirtualDevice(int local_rank) const;

 private:
  bool WantsFramework(std::string_view name) const;
  // direct.framework_env: JAX's shared variables; TF_CONFIG's cluster part.
  void AddFrameworkVariables();
  void AddStackDumper();
  const LaunchPlan& plan_;
  std::vector<std::string> shared_;
  std::vector<std::pair<std::string, std::string>> replaced_;
  std::string omp_default_;  // set: OMP_NUM_THREADS is per worker (placements), this when a rank has none
  bool user_metrics_file_ = false;  // PRIMUS_METRICS_FILE came from the user: never replaced
  std::string tf_cluster_;  // TF_CONFIG up to the task index; "" when not asked for
  bool stack_dumper_ = false;  // python/primus_stacks is first on PYTHONPATH
  bool flight_recorder_ = false;
  std::string user_flight_dump_prefix_, user_flight_pipe_prefix_;  // the user's own; "" when not set
};

}  // namespace primus::agent
