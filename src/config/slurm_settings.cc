#include "config/slurm_settings.h"

#include <optional>
#include <string>
#include <vector>

#include "config/scheduler_settings.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace primus::config {
namespace {

// The first of `names` that is set, with its name.
struct Found {
  std::string name;
  std::string value;
};
std::optional<Found> FirstSet(const Environment& env, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (std::optional<std::string> value = Lookup(env, name)) return Found{name, *value};
  }
  return std::nullopt;
}

Error BadVariable(const Found& found, const std::string& expected) {
  return Error{ExitCode::kUnavailable,
               found.name + "='" + found.value + "' in the environment is not " + expected,
               "this variable comes from Slurm; check the srun/sbatch command, or pass --platform none "
               "and give --nnodes/--node-rank/--master-addr yourself"};
}

// A whole non-negative number, or an error naming the variable.
Result<int64_t> Count(const Found& found) {
  std::optional<int64_t> number = ParseInt(Trim(found.value));
  if (!number || *number < 0) return BadVariable(found, "a number");
  return *number;
}

// A step srun started. Slurm 22.05 sets no step id in the batch script; the
// special steps (batch 0xfffffffb, extern, interactive: 4294967290 and up)
// are not steps of the job's nodes either, should a version set them.
bool InStep(const Environment& env) {
  std::optional<std::string> id = Lookup(env, "SLURM_STEP_ID");
  if (!id) id = Lookup(env, "SLURM_STEPID");
  if (!id) return false;
  std::optional<int64_t> number = ParseInt(Trim(*id));
  return !number || *number < 4294967290LL;
}

const std::vector<std::string> kJobIdVariables = {"SLURM_JOB_ID", "SLURM_JOBID"};
const std::vector<std::string> kJobNodeVariables = {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"};

}  // namespace

int SlurmMasterPort(int64_t job_id) { return 20000 + 2 * static_cast<int>(job_id % 5000); }

Result<SchedulerSettings> DetectSlurm(const Environment& env) {
  std::optional<Found> job_id = FirstSet(env, kJobIdVariables);
  if (!job_id) return SchedulerSettings{};
  Result<int64_t> job_number = Count(*job_id);
  if (!job_number.ok()) return job_number.error();

  SchedulerSettings found;
  found.scheduler = "slurm";
  found.job_id = std::to_string(*job_number);
  if (std::optional<Found> restarts = FirstSet(env, {"SLURM_RESTART_COUNT"})) {
    Result<int64_t> count = Count(*restarts);
    if (!count.ok()) return count.error();
    found.restart_count = static_cast<int>(*count);
  }

  const bool step = InStep(env);
  std::vector<std::string> node_variables = kJobNodeVariables;
  if (step) node_variables.insert(node_variables.begin(), "SLURM_STEP_NUM_NODES");
  std::optional<Found> nodes = FirstSet(env, node_variables);
  std::optional<Found> node_id = FirstSet(env, {"SLURM_NODEID"});
  if (!step) {
    // The batch script or an salloc shell. Only a one-node job's batch script
    // (on its node: SLURM_NODEID is set) is the same as a one-node step.
    if (!nodes || !node_id || Trim(nodes->value) != "1") return found;
  }
  if (!nodes) {
    return Error{ExitCode::kUnavailable, "this Slurm job step sets neither SLURM_STEP_NUM_NODES nor SLURM_JOB_NUM_NODES",
                 "pass --nnodes, --node-rank and --master-addr, or --platform none"};
  }
  Result<int64_t> nnodes = Count(*nodes);
  if (!nnodes.ok()) return nnodes.error();
  if (*nnodes < 1 || *nnodes > (1 << 18)) return BadVariable(*nodes, "a number of nodes from 1 to 262144");

  if (step) {
    // One agent per node: several tasks on a node would start several agents
    // claiming the same node rank.
    std::optional<Found> tasks = FirstSet(env, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"});
    if (tasks) {
      Result<int64_t> ntasks = Count(*tasks);
      if (!ntasks.ok()) return ntasks.error();
      if (*ntasks > *nnodes) {
        return Error{ExitCode::kUnavailable,
                     "this Slurm job step runs " + std::to_string(*ntasks) + " tasks on " + std::to_string(*nnodes) +
                         " node(s) (" + tasks->name + "=" + tasks->value + ", " + nodes->name + "=" + nodes->value +
                         "), but primus-cli direct is one node agent per node that starts the workers itself",
                     "run srun with --ntasks-per-node=1 (primus-cli slurm srun does), and choose the workers per "
                     "node with --nproc-per-node"};
      }
    }
  }

  if (!node_id) {
    return Error{ExitCode::kUnavailable, "this Slurm job step does not set SLURM_NODEID",
                 "pass --node-rank yourself, or --platform none"};
  }
  Result<int64_t> node_rank = Count(*node_id);
  if (!node_rank.ok()) return node_rank.error();
  if (*node_rank >= *nnodes) {
    return BadVariable(*node_id, "below " + nodes->name + "=" + nodes->value);
  }

  std::vector<std::string> list_variables = {"SLURM_JOB_NODELIST", "SLURM_NODELIST"};
  if (step) list_variables.insert(list_variables.begin(), "SLURM_STEP_NODELIST");
  std::optional<Found> node_list = FirstSet(env, list_variables);
  if (!node_list) {
    return Error{ExitCode::kUnavailable, "this Slurm job step sets neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST",
                 "pass --master-addr (node 0's address) yourself"};
  }
  // Only the first host is needed: never expand the whole list (a short
  // expression can name 10^8 hosts).
  Result<std::string> first_host = FirstHost(node_list->value);
  if (!first_host.ok()) {
    return Error{ExitCode::kUnavailable, node_list->name + ": " + first_host.error().message,
                 "pass --master-addr (node 0's address) yourself"};
  }

  found.settings.push_back({"direct.nnodes", std::to_string(*nnodes), nodes->name});
  found.settings.push_back({"direct.node_rank", std::to_string(*node_rank), node_id->name});
  found.settings.push_back({"direct.master_addr", *first_host, node_list->name});
  found.settings.push_back({"direct.master_port", std::to_string(SlurmMasterPort(*job_number)), job_id->name});
  if (std::optional<Found> gpus = FirstSet(env, {"SLURM_GPUS_ON_NODE"})) {
    Result<int64_t> count = Count(*gpus);
    if (!count.ok()) return count.error();
    if (*count > 0) found.settings.push_back({"direct.nproc_per_node", std::to_string(*count), gpus->name});
  }
  return found;
}

Status CheckDirectInSlurmAllocation(const Environment& env, const LauncherConfig& launcher) {
  const std::string& platform = launcher.GetString("direct.platform");
  if (platform != "auto" && platform != "slurm") return Status::Ok();
  if (platform == "auto" && Lookup(env, "LOCAL_RANK") && Lookup(env, "TORCHELASTIC_RUN_ID")) return Status::Ok();
  std::optional<Found> job_id = FirstSet(env, kJobIdVariables);
  if (!job_id || InStep(env)) return Status::Ok();
  std::optional<Found> nodes = FirstSet(env, kJobNodeVariables);
  if (!nodes) return Status::Ok();
  std::optional<int64_t> nnodes = ParseInt(Trim(nodes->value));
  if (!nnodes || *nnodes <= 1) return Status::Ok();
  const std::string& origin = launcher.OriginOf("direct.nnodes").source;
  if (origin.starts_with("flag") || origin.starts_with("--set") || origin.starts_with("env")) return Status::Ok();

  std::optional<Found> node_list = FirstSet(env, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  std::string where = Lookup(env, "SLURM_NODEID") ? "the batch script" : "an salloc shell";
  return Error{ExitCode::kUnavailable,
               "this is " + where + " of Slurm job " + job_id->value + " with " + std::to_string(*nnodes) +
                   " nodes (" + nodes->name + "=" + nodes->value +
                   (node_list ? ", " + node_list->name + "=" + node_list->value : std::string()) +
                   "), not a job step: direct here would start the workers of this one node only",
               "start one agent on every node: primus-cli slurm srun -- direct ... (it runs srun "
               "--ntasks-per-node=1 for you), or srun --ntasks-per-node=1 primus-cli direct ...; to run on this "
               "node alone, pass --nnodes 1 (or --platform none)"};
}

}  // namespace primus::config
