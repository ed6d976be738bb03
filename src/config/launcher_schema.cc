#include "config/launcher_schema.h"

#include <cstdint>
#include <string_view>

namespace primus::config {
namespace {

constexpr ValueType kString = ValueType::kString;
constexpr ValueType kInt = ValueType::kInt;
constexpr ValueType kDouble = ValueType::kDouble;
constexpr ValueType kBool = ValueType::kBool;
constexpr ValueType kStringList = ValueType::kStringList;
constexpr ValueType kStringMap = ValueType::kStringMap;

// Defaults are written as an environment variable would be ("" is an empty
// list or map for those types).
std::vector<SchemaKey> LauncherKeys() {
  return {
      {"main.log_level", kString, "info", "log level: debug, info, warn or error"},
      {"main.debug", kBool, "false", "log every resolved command and environment change"},
      {"main.quiet", kBool, "false", "only warnings and errors"},
      {"main.group_readable", kBool, "false",
       "run and experiment directories readable by your group (0750/0640) instead of yours alone (0700/0600)"},

      {"train.preflight", kBool, "true", "run the fast preflight checks before every train launch (train --no-preflight)"},
      {"train.primus_path", kString, "", "the Primus installation that runs Primus-format experiments (default: $PRIMUS_PATH, the current directory, /workspace/Primus)"},
      {"train.hang_timeout", kDouble, "1800.0", "train's hang watchdog when neither --hang-timeout nor the experiment's fault_tolerance.hang_timeout sets one; 0 is off"},

      {"direct.nproc_per_node", kString, "auto", "workers per node: a number, or auto (one per GPU)"},
      {"direct.nnodes", kInt, "1", "number of nodes (the most, in an elastic job)"},
      {"direct.min_nnodes", kInt, "0", "elastic jobs: the fewest nodes the job runs on (0: exactly nnodes); needs the c10d or etcd-v2 rendezvous"},
      {"direct.rendezvous", kString, "static", "how the nodes find each other: static (node ranks given, node 0 coordinates), c10d (the agent on the host of master_addr:control_port coordinates and hands node ranks out) or etcd-v2 (an etcd server at direct.rdzv_endpoint names the coordinator)"},
      {"direct.rdzv_endpoint", kString, "", "etcd-v2: the etcd server's host:port"},
      {"direct.local_addr", kString, "", "etcd-v2: this node's address as the other nodes reach it; empty: its host name"},
      {"direct.telemetry_interval", kDouble, "5.0", "seconds between samples of the node (GPUs, workers, their metrics; docs/monitor.md); 0 is off"},
      {"direct.tensorboard", kBool, "true", "node 0 writes TensorBoard event files of the job's metrics and telemetry (one run per attempt) under <log dir>/tensorboard, or <experiment>/tensorboard for train; needs telemetry on"},
      {"direct.progress_format", kString, "auto", "which framework's progress lines to read from the workers' output into their metrics (docs/monitor.md): auto, megatron, torchtitan, hf, nanogpt, primus, regex (direct.progress_regex) or none; train's backend chooses when this is auto"},
      {"direct.progress_regex", kString, "", "with progress_format regex: an RE2 pattern whose named groups (step, total_steps, loss, lr, tokens_per_s, step_time_s, step_time_ms, tflops_per_gpu, grad_norm) are read from each matching line"},
      {"direct.last_call_timeout", kDouble, "30.0", "elastic jobs: once the minimum joined, seconds more nodes may join before the start"},
      {"direct.node_rank", kInt, "0", "rank of this node, 0 to nnodes-1"},
      {"direct.master_addr", kString, "", "address of the rank-0 node"},
      {"direct.master_port", kInt, "0", "rendezvous port; 0 chooses a free port"},
      {"direct.platform", kString, "auto", "where nnodes, node rank and master come from: auto, slurm, mpi, pytorchjob, jobset, platform, none"},
      {"direct.control_port", kInt, "0", "port of node 0's control channel; 0 is master_port + 1"},
      {"direct.metrics_port", kInt, "0", "port where each agent serves /metrics (Prometheus) and /job.json: node 0 the job's view, other nodes their own; 0 is off"},
      {"direct.join_timeout", kDouble, "300.0", "seconds a node waits for all nodes to join"},
      {"direct.exit_barrier_timeout", kDouble, "30.0", "seconds node 0 waits for every node to report its end"},
      {"direct.heartbeat_interval", kDouble, "1.0", "seconds between control-channel heartbeats"},
      {"direct.heartbeat_timeout", kDouble, "10.0", "seconds without a heartbeat before a node is called lost"},
      {"direct.max_restarts", kInt, "0", "times the worker group is restarted after a failure"},
      {"direct.restart_backoff", kDouble, "1.0", "seconds to wait before a restart"},
      {"direct.term_timeout", kDouble, "30.0", "seconds between SIGTERM and SIGKILL when stopping workers"},
      {"direct.hang_timeout", kDouble, "0.0", "seconds without progress before a job is called hung; 0 is off (train: see train.hang_timeout)"},
      {"direct.exit_grace", kDouble, "60.0", "once a worker exited 0, seconds the others may stay silent before they are called stuck at exit and stopped; 0 waits forever"},
      {"direct.log_dir", kString, "", "directory for per-rank logs"},
      {"direct.torchrun_log_files", kBool, "false", "also write torchrun's layout in each attempt directory: <local rank>/stdout.log and stderr.log for the streams --redirects or --tee name, and error.json"},
      {"direct.exclude_bad_nodes", kBool, "false", "a node found bad (the hang's culprit, a failure again on the same node) is left out and the job goes on: elastic jobs at the smaller size, slurm srun and ssh on a spare node"},
      {"direct.spare_nodes", kInt, "0", "set by slurm srun and ssh under direct.exclude_bad_nodes: the nodes they can start the job on instead of a bad one (0: node 0 keeps a bad node and restarts in place)"},
      {"direct.flight_recorder", kBool, "true", "turn on PyTorch's NCCL flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE, dump on timeout and on a hang, in the attempt directory) where the user set none of its variables"},
      {"direct.stack_dumper", kBool, "true", "Python workers load primus-cli's stack dumper (faulthandler on a signal), so a hang has stacks without py-spy"},
      {"direct.framework_env", kString, "", "other frameworks' distributed variables for every worker: jax, tensorflow (comma-separated)"},
      {"direct.virtual_local_rank", kBool, "false", "torchrun's --virtual-local-rank: every worker gets LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES naming only its own GPU"},
      {"direct.ranks_filter", kString, "", "global ranks whose output reaches the console, e.g. 0,8-15"},
      {"direct.local_ranks_filter", kString, "", "local ranks whose output reaches the console on every node, e.g. 0"},
      {"direct.redirects", kString, "", "streams kept off the console (the log files keep them), torchrun's format: 0-3 (1 stdout, 2 stderr, 3 both) or LOCAL_RANK:0-3,..."},
      {"direct.tee", kString, "", "streams shown on the console even where direct.redirects keeps them off, same format"},
      {"direct.worker_stderr", kString, "stdout", "the console for the workers' stderr lines: stdout (the agent's, in order with their stdout) or stderr (torchrun's way)"},
      {"direct.run_id", kString, "", "the launch's name: TORCHELASTIC_RUN_ID and the default log directory; empty: generated"},
      {"direct.role", kString, "default", "the workers' role (ROLE_NAME)"},
      {"direct.omp_num_threads", kString, "share", "OMP_NUM_THREADS where the user has not set it: share (usable CPUs / workers) or torchrun (1 with several workers)"},
      {"direct.failure_exit_code", kInt, "0", "exit code when the workers failed, for every task that runs workers; 0: the root-cause worker's own code (torchrun exits 1)"},
      {"direct.console_prefix", kString, "[{host}:{rank}] ", "prefix of each console line"},
      {"direct.env", kStringMap, "", "environment variables set for the workers"},
      {"direct.patch", kStringList, "", "patch scripts run before the workers, in order"},
      {"direct.hooks_dir", kStringList, "", "directories searched for hooks"},
      {"direct.numa_bind", kBool, "false", "bind each worker to the NUMA node of its GPU"},
      {"direct.profile", kString, "", "named environment profiles for the workers (NAME[,NAME]: profiles/named/)"},

      {"container.image", kString, "", "container image to run in"},
      {"container.engine", kString, "auto", "docker, podman, or auto"},
      {"container.mounts", kStringList, "", "host:container bind mounts"},
      {"container.env", kStringList, "", "environment passed into the container: NAME or NAME=VALUE"},
      {"container.devices", kStringList, "", "extra devices passed into the container"},
      {"container.options", kStringList, "", "extra arguments for the container engine"},
      {"container.shm_size", kString, "", "size of a private /dev/shm; empty shares the host's (--ipc=host)"},
      {"container.user", kString, "", "user (uid[:gid]) to run as in the container"},
      {"container.pull", kString, "missing", "when to pull the image: always, missing or never"},
      {"container.name", kString, "", "container name; empty chooses one"},
      {"container.forward_env", kStringList, "PRIMUS_,NCCL_,RCCL_,GLOO_,HSA_,HIP_,CUDA_,TORCH_",
       "host variables with these name prefixes are passed into the container"},

      {"slurm.partition", kString, "", "Slurm partition"},
      {"slurm.account", kString, "", "Slurm account"},
      {"slurm.time", kString, "", "time limit, e.g. 4:00:00"},
      {"slurm.qos", kString, "", "quality of service"},
      {"slurm.reservation", kString, "", "reservation name"},
      {"slurm.nodes", kString, "", "nodes to allocate: N, or MIN-MAX to let Slurm grant any count in the range; empty or 0 leaves it to Slurm and the other settings"},
      {"slurm.gpus_per_node", kInt, "0", "GPUs per node to request; 0 does not ask for GPUs explicitly"},
      {"slurm.options", kStringList, "", "extra srun/sbatch arguments"},
      {"slurm.requeue", kBool, "false", "requeue the job when a node fails"},
      {"slurm.wait", kBool, "false", "wait for a batch job to finish"},

      {"ssh.hostfile", kString, "", "the hosts of an ssh job: one per line, OpenMPI/DeepSpeed `host slots=N` or MPICH `host:N`"},
      {"ssh.hosts", kString, "", "the hosts of an ssh job as a Slurm-style list (gpu[01-04],gpu07); instead of ssh.hostfile"},
      {"ssh.nodes", kInt, "0", "use the first N of the hosts; 0: all of them"},
      {"ssh.include", kString, "", "only these hosts of the hostfile (a host list)"},
      {"ssh.exclude", kString, "", "leave these hosts of the hostfile out (a host list)"},
      {"ssh.env", kStringList, "", "variables for the workers on every host: K=V, or K to pass this host's value"},
      {"ssh.master_addr", kString, "", "node 0's address as the other hosts reach it; empty: the first host's HostName (ssh -G)"},
      {"ssh.master_port", kInt, "29500", "rendezvous port on node 0; the control channel uses the next one"},
      {"ssh.connect_timeout", kInt, "10", "seconds ssh may take to connect (ConnectTimeout) in the host checks and the launch"},
      {"ssh.parallel", kInt, "32", "hosts checked (and copied to) at the same time"},
      {"ssh.options", kStringList, "", "extra ssh arguments, before the host (-F FILE, -J JUMP, -o K=V, ...)"},

      {"k8s.namespace", kString, "default", "Kubernetes namespace"},
      {"k8s.image", kString, "", "container image for the pods"},
      {"k8s.vendor", kString, "auto", "GPU vendor: amd, nvidia, or auto"},
      {"k8s.gpus_per_node", kInt, "0", "GPUs per pod; 0 leaves the choice to the launcher"},
      {"k8s.service_account", kString, "", "service account of the pods"},
      {"k8s.platform", kString, "auto", "target Kubernetes platform; auto detects it"},
      {"k8s.nodes", kInt, "0", "pods (nodes) in the job, one node agent each; k8s manifest/submit need it"},
      {"k8s.kind", kString, "job", "job (Indexed Job + headless Service) or pytorchjob (Kubeflow PyTorchJob)"},
      {"k8s.name", kString, "", "name of the job and its Service; empty: primus-<task>-<random>"},
      {"k8s.binary", kString, "primus-cli", "primus-cli inside the image: a name on its PATH, or a path"},
      {"k8s.host_network", kBool, "false", "pods use their node's network (hostNetwork)"},
      {"k8s.master_port", kInt, "29500", "rendezvous port in the pods; the control channel uses the next one"},
      {"k8s.backoff_limit", kInt, "0", "pod failures before Kubernetes fails the whole job"},
      {"k8s.shm_size", kString, "", "size limit of the memory-backed /dev/shm; empty: none"},
  };
}

// The accepted range of each integer key (docs/configuration.md, "Limits"):
// wide enough for any cluster, narrow enough that no count, port or product
// of them overflows where it is used.
struct IntRange {
  std::string_view path;
  int64_t min, max;
};
constexpr int64_t kMaxNodes = 1 << 18;  // x 4096 workers per node still fits in an int
constexpr int64_t kMaxGpusPerNode = 1024;
constexpr IntRange kIntRanges[] = {
    {"direct.nnodes", 1, kMaxNodes},        {"direct.node_rank", 0, kMaxNodes - 1},
    {"direct.master_port", 0, 65535},       {"direct.control_port", 0, 65535},
    {"direct.max_restarts", 0, 1000000},    {"direct.failure_exit_code", 0, 255},
    {"slurm.gpus_per_node", 0, kMaxGpusPerNode}, {"k8s.gpus_per_node", 0, kMaxGpusPerNode},
    {"k8s.nodes", 0, kMaxNodes},            {"k8s.master_port", 1, 65534},
    {"k8s.backoff_limit", 0, 1000000},
    {"ssh.nodes", 0, kMaxNodes},            {"ssh.master_port", 1, 65534},
    {"ssh.connect_timeout", 1, 3600},       {"ssh.parallel", 1, 1024},
};

std::vector<SchemaKey> RangedLauncherKeys() {
  std::vector<SchemaKey> keys = LauncherKeys();
  for (SchemaKey& key : keys) {
    for (const IntRange& range : kIntRanges) {
      if (key.path == range.path) {
        key.min = range.min;
        key.max = range.max;
      }
    }
  }
  return keys;
}

}  // namespace

const Schema& LauncherSchema() {
  static const Schema schema(RangedLauncherKeys());
  return schema;
}

const std::vector<std::pair<std::string, std::string>>& ExperimentLaunchKeys() {
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"distributed.nproc_per_node", "direct.nproc_per_node"},
      {"distributed.nnodes", "direct.nnodes"},
      {"fault_tolerance.max_restarts", "direct.max_restarts"},
      {"fault_tolerance.hang_timeout", "direct.hang_timeout"},
      {"fault_tolerance.exclude_bad_nodes", "direct.exclude_bad_nodes"},
  };
  return keys;
}

}  // namespace primus::config
