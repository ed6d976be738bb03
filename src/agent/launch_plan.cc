#include "agent/launch_plan.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "io/tcp_port.h"
#include "io/spawn.h"
#include "agent/worker_env.h"
#include "util/files.h"
#include "util/private_files.h"
#include "util/random.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

Status ValidateNumbers(const LaunchSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return UsageError("no worker command given", "put the command after '--'");
  }
  if (spec.nproc_per_node < 1) {
    return UsageError("nproc_per_node must be at least 1, got " + std::to_string(spec.nproc_per_node));
  }
  if (spec.nnodes < 1) return UsageError("nnodes must be at least 1, got " + std::to_string(spec.nnodes));
  if (spec.node_rank < 0 || spec.node_rank >= spec.nnodes) {
    return UsageError("node_rank " + std::to_string(spec.node_rank) + " is outside 0.." +
                      std::to_string(spec.nnodes - 1) + " for nnodes " + std::to_string(spec.nnodes));
  }
  if (spec.master_port < 0 || spec.master_port > 65535) {
    return UsageError("master_port " + std::to_string(spec.master_port) + " is not a TCP port (1..65535)");
  }
  bool assigned = spec.rendezvous != kStaticRendezvous && spec.nnodes > 1;
  if (!IsRendezvous(spec.rendezvous)) {
    return UsageError("rendezvous '" + spec.rendezvous + "' is not one of static, c10d, etcd-v2");
  }
  if (spec.min_nnodes < 0 || spec.min_nnodes > spec.nnodes) {
    return UsageError("min_nnodes " + std::to_string(spec.min_nnodes) + " is outside 1.." + std::to_string(spec.nnodes),
                      "an elastic job runs on MIN..MAX nodes: give --nnodes MIN:MAX");
  }
  if (spec.min_nnodes != 0 && spec.min_nnodes < spec.nnodes && !assigned) {
    return UsageError("an elastic job (" + std::to_string(spec.min_nnodes) + ":" + std::to_string(spec.nnodes) +
                          " nodes) needs node ranks handed out as nodes join",
                      "add --rendezvous c10d --master-addr HOST --control-port PORT, the same on every node "
                      "(torchrun: --rdzv-backend c10d --rdzv-endpoint HOST:PORT), or use etcd-v2");
  }
  if (!(spec.last_call_timeout_s >= 0)) return UsageError("last_call_timeout must not be negative");
  if (!(spec.telemetry_interval_s >= 0)) {
    return UsageError(fmt::format("telemetry_interval must not be negative (got {:g})", spec.telemetry_interval_s),
                      "give --telemetry-interval (direct.telemetry_interval) the seconds between samples, or 0 to "
                      "turn telemetry off");
  }
  if (spec.nnodes > 1 && spec.master_port == 0 && !assigned) {
    return UsageError("master_port is required when nnodes > 1",
                      "every node must agree on it; pick one such as 29500");
  }
  if (assigned && spec.rendezvous == kC10dRendezvous && (spec.control_port == 0 || spec.master_addr.empty())) {
    return UsageError("the c10d rendezvous needs its endpoint: the host and port of the agent that coordinates",
                      "give --master-addr HOST --control-port PORT, the same on every node (torchrun: "
                      "--rdzv-endpoint HOST:PORT)");
  }
  if (assigned && spec.rendezvous == kEtcdRendezvous && spec.rdzv_endpoint.empty()) {
    return UsageError("the etcd-v2 rendezvous needs the etcd server's address",
                      "give --rdzv-endpoint HOST:PORT (the etcd server's client port)");
  }
  if (assigned && spec.rendezvous == kEtcdRendezvous && spec.run_id.empty()) {
    return UsageError("the etcd-v2 rendezvous needs the run id: the nodes of one job meet under it",
                      "give the same --rdzv-id (direct.run_id) on every node");
  }
  if (spec.nnodes > 1 && spec.master_addr.empty() && spec.rendezvous == kStaticRendezvous) {
    return UsageError("master_addr is required when nnodes > 1",
                      "give the address of node rank 0, reachable from every node");
  }
  if (spec.metrics_port < 0 || spec.metrics_port > 65535) {
    return UsageError("metrics port " + std::to_string(spec.metrics_port) + " is not a TCP port (1..65535)",
                      "give --metrics-port PORT, or 0 to serve no metrics");
  }
  if (spec.metrics_port != 0 && (spec.metrics_port == spec.master_port || spec.metrics_port == spec.control_port)) {
    return UsageError("the metrics port " + std::to_string(spec.metrics_port) +
                          " is also the master or control port",
                      "give --metrics-port a port of its own");
  }
  if (spec.nnodes > 1 && !assigned) {
    int control_port = spec.control_port != 0 ? spec.control_port : spec.master_port + 1;
    if (spec.control_port < 0 || control_port > 65535) {
      return UsageError("control port " + std::to_string(control_port) + " is not a TCP port (1..65535)",
                        "give --control-port, or a --master-port below 65535 (the default is master port + 1)");
    }
    if (control_port == spec.master_port) {
      return UsageError("the control port must differ from the master port (" + std::to_string(spec.master_port) + ")",
                        "leave --control-port unset (master port + 1) or pick another port");
    }
  }
  if (spec.nnodes > 1) {
    if (spec.control_port < 0 || spec.control_port > 65535) {
      return UsageError("control port " + std::to_string(spec.control_port) + " is not a TCP port (1..65535)");
    }
    if (!(spec.join_timeout_s > 0) || !(spec.exit_barrier_timeout_s >= 0)) {
      return UsageError("join_timeout must be positive and exit_barrier_timeout not negative");
    }
    if (!(spec.heartbeat_interval_s > 0) || !(spec.heartbeat_timeout_s > spec.heartbeat_interval_s)) {
      return UsageError("heartbeat_timeout (" + fmt::format("{:g}", spec.heartbeat_timeout_s) +
                            " s) must be longer than heartbeat_interval (" +
                            fmt::format("{:g}", spec.heartbeat_interval_s) + " s), which must be positive");
    }
  }
  if (spec.restarts_before < 0) return UsageError("restarts_before must not be negative");
  if (spec.max_restarts < 0) return UsageError("max_restarts must not be negative");
  if (!(spec.restart_backoff_s >= 0) || !(spec.max_restart_backoff_s >= 0)) {
    return UsageError("restart backoff must not be negative");
  }
  if (!(spec.term_timeout_s >= 0)) return UsageError("term_timeout must not be negative");
  if (!(spec.hang_timeout_s >= 0)) return UsageError("hang_timeout must not be negative (0 turns it off)");
  if (!(spec.exit_grace_s >= 0)) return UsageError("exit_grace must not be negative (0 waits for every worker forever)");
  if (spec.role.empty()) return UsageError("role must not be empty");
  int world_size = spec.nnodes * spec.nproc_per_node;
  for (int rank : spec.ranks_filter) {
    if (rank < 0 || rank >= world_size) {
      return UsageError("ranks filter names rank " + std::to_string(rank) + ", outside 0.." +
                        std::to_string(world_size - 1));
    }
  }
  if (!spec.placements.empty() && static_cast<int>(spec.placements.size()) != spec.nproc_per_node) {
    return UsageError("CPU placement is for " + std::to_string(spec.placements.size()) + " local ranks, but " +
                          "nproc_per_node is " + std::to_string(spec.nproc_per_node),
                      "place the ranks (ApplyPlatform) after the last change to nproc_per_node");
  }
  for (const WorkerPlacement& placement : spec.placements) {
    for (int cpu : placement.cpus) {
      if (cpu < 0 || cpu >= io::kMaxCpus) return UsageError("CPU " + std::to_string(cpu) + " is not a CPU number");
    }
  }
  for (const auto* env : {&spec.env, &spec.env_overrides}) {
    for (const auto& [name, value] : *env) {
      if (name.empty() || name.find('=') != std::string::npos) {
        return UsageError("worker environment variable name '" + name + "' is not valid");
      }
      if (IsAgentOwnedVariable(name)) {
        return UsageError("worker environment sets " + name + ", which the agent sets per worker",
                          "use the launch options (nnodes, node rank, master address/port) instead");
      }
    }
  }
  return Status::Ok();
}

}  // namespace


namespace {

// Whether `dir` holds logs that `host` wrote in an earlier run and this run
// would write again: attempt_<k>, k >= first_generation, with a file of its.
bool HoldsLogsOfHost(const std::string& dir, const std::string& host, int first_generation) {
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) return false;
  bool found = false;
  while (dirent* entry = ::readdir(stream)) {
    std::string_view name = entry->d_name;
    if (!name.starts_with("attempt_")) continue;
    std::optional<int64_t> attempt = ParseInt(name.substr(8));
    if (!attempt || *attempt < first_generation) continue;
    DIR* files = ::opendir(JoinPath(dir, std::string(name)).c_str());
    if (files == nullptr) continue;
    while (dirent* file = ::readdir(files)) {
      if (std::string_view(file->d_name).starts_with(host + ".")) found = true;
    }
    ::closedir(files);
    if (found) break;
  }
  ::closedir(stream);
  return found;
}

// `parent`/<run id> when it is ours and clashes with nothing of `host`'s
// (the job's other nodes may have made it), else a fresh <run id>_<hex>.
Result<std::string> RunDirIn(const std::string& parent, const std::string& run_id, const std::string& host,
                             int first_generation) {
  std::string joined = JoinPath(parent, run_id);
  if (MakePrivateDir(joined).ok() && !HoldsLogsOfHost(joined, host, first_generation)) return joined;
  return MakeFreshDir(parent, run_id);
}

bool IsSticky(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX) != 0;
}

}  // namespace

Result<std::string> MakeRunLogDir(const std::string& given, const std::string& run_id, const std::string& host,
                                  int first_generation) {
  if (given.empty()) {
    std::string runs = DefaultRunsDir();
    if (Status made = MakePrivateDir(runs); !made) return made.error();
    return MakeFreshDir(runs, run_id);
  }
  if (!PathExists(given)) {
    if (std::string parent = DirName(given); !PathExists(parent)) {
      if (Status made = MakeDirs(parent, PrivateDirMode()); !made) return made.error();
    }
    if (Status made = MakePrivateDir(given); !made) return made.error();
    return given;
  }
  if (Status checked = CheckPrivateDir(given, LinkPolicy::kOwnLinkOnly); !checked) {
    // A shared scratch directory (sticky, as /tmp): a directory of ours inside it.
    if (!IsSticky(given)) return checked.error();
    auto own = RunDirIn(given, run_id, host, first_generation);
    if (own) log::Info("{} is shared with other users: this run's logs go to {}", given, *own);
    return own;
  }
  if (!HoldsLogsOfHost(given, host, first_generation)) return given;
  auto fresh = RunDirIn(given, run_id, host, first_generation);
  if (fresh) log::Info("{} holds the logs of an earlier run on this host; this run's go to {}", given, *fresh);
  return fresh;
}

std::string GenerateRunId() {
  time_t now = time(nullptr);
  tm local;
  localtime_r(&now, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  return std::string(stamp) + "-" + RandomHex(3);
}

int UsableCpuCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

Result<LaunchPlan> PlanLaunch(const LaunchSpec& spec) {
  if (Status status = ValidateNumbers(spec); !status) return status.error();

  for (int local_rank : spec.local_ranks_filter) {
    if (local_rank >= spec.nproc_per_node) {
      // torchrun accepts this too; on a node with fewer workers it shows nothing of that rank.
      log::Warn("the local ranks filter names local rank {}, but this node runs {} worker{} (local ranks 0-{})",
                local_rank, spec.nproc_per_node, spec.nproc_per_node == 1 ? "" : "s", spec.nproc_per_node - 1);
    }
  }
  LaunchPlan plan;
  plan.spec = spec;
  auto prefix = ConsolePrefix::Parse(spec.console_prefix);
  if (!prefix) return prefix.error();
  plan.console_prefix = std::move(*prefix);

  if (plan.spec.run_id.empty()) plan.spec.run_id = GenerateRunId();
  if (!IsSafePathComponent(plan.spec.run_id)) {
    return UsageError("run id '" + plan.spec.run_id + "' may only use letters, digits, '-', '_' and '.'",
                      "it names the log directory");
  }

  plan.executable = FindExecutable(spec.argv[0]);
  if (plan.executable.empty()) {
    bool has_slash = spec.argv[0].find('/') != std::string::npos;
    return UnavailableError(
        "worker executable '" + spec.argv[0] + "' " +
            (has_slash ? "does not exist or is not executable" : "was not found on PATH"),
        has_slash ? "check the path and its execute permission"
                  : "install it, or give its full path (PATH=" +
                        std::string(std::getenv("PATH") ? std::getenv("PATH") : "") + ")");
  }

  if (plan.spec.min_nnodes == 0) plan.spec.min_nnodes = plan.spec.nnodes;
  bool assigned = plan.spec.rendezvous != kStaticRendezvous && plan.spec.nnodes > 1;
  if (plan.spec.master_addr.empty() && !assigned) plan.spec.master_addr = "127.0.0.1";
  if (assigned) {
    // The coordinator picks the master port of each generation.
  } else if (plan.spec.master_port == 0) {
    auto port = io::PickFreePort();
    if (!port) return port.error();
    plan.spec.master_port = *port;
  } else if (plan.spec.node_rank == 0) {
    if (Status status = io::CheckPortFree(plan.spec.master_port); !status) return status.error();
  }

  auto log_dir = MakeRunLogDir(plan.spec.log_dir, plan.spec.run_id, log::HostName(), plan.spec.restarts_before);
  if (!log_dir) {
    Error error = log_dir.error();
    error.message = "cannot create the log directory: " + error.message;
    return error;
  }
  plan.spec.log_dir = std::move(*log_dir);

  plan.host = log::HostName();
  auto token = NewJobToken();
  if (!token.ok()) return token.error();
  plan.token = std::move(*token);
  plan.cpu_count = UsableCpuCount();
  return plan;
}

}  // namespace primus::agent
