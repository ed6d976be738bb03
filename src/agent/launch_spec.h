// The node agent's public data: what to launch (LaunchSpec) and how it ended
// (RunResult, with the root-cause failure for the banner and for snapshot
// metadata). The CLI fills a LaunchSpec from flags and config and calls
// RunWorkers (run_workers.h); nothing here depends on how it was filled.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/stream_selection.h"
#include "platform/host_info.h"
#include "telemetry/progress_line.h"

namespace primus::agent {

// How the agents of a job find each other and their node ranks:
//   static   every node is given its node rank; node 0 coordinates.
//   c10d     the host of the rendezvous endpoint coordinates (the agent that
//            binds it first); node ranks are handed out as nodes join.
//   etcd-v2  an etcd server names the coordinator; ranks as with c10d.
// Only a job whose ranks are handed out can be elastic (min_nnodes < nnodes).
// The environment variable carrying the per-job secret; the launching side
// (the Slurm runtime, the pod's Secret) creates it, every agent reads it.
inline constexpr char kJobTokenVariable[] = "PRIMUS_JOB_TOKEN";

inline constexpr char kStaticRendezvous[] = "static";
inline constexpr char kC10dRendezvous[] = "c10d";
inline constexpr char kEtcdRendezvous[] = "etcd-v2";
inline bool IsRendezvous(const std::string& name) {
  return name == kStaticRendezvous || name == kC10dRendezvous || name == kEtcdRendezvous;
}

// Where one local rank runs (--numa-bind): the CPUs the worker is bound to
// (sched_setaffinity before exec) and its OMP_NUM_THREADS, which is set only
// where the user has not set OMP_NUM_THREADS. Empty cpus: not bound.
struct WorkerPlacement {
  std::vector<int> cpus;
  int omp_num_threads = 0;  // 0: the agent's default (usable CPUs / nproc_per_node)
};

struct LaunchSpec {
  std::vector<std::string> argv;  // worker command, run once per local rank (no implicit python)
  int nproc_per_node = 1;
  // nproc_per_node was "auto"/"gpu" and not yet counted: ApplyPlatform sets it to the
  // visible GPUs (at least 1) and clears this. Whoever sets nproc_per_node itself clears it.
  bool nproc_per_node_auto = false;
  // It was "gpu" (torchrun's word): with no GPU visible the launch fails, as torchrun's does.
  bool nproc_per_node_gpu = false;
  int nnodes = 1, node_rank = 0;
  // How the agents find each other (above): "static" (node
  // ranks given, node 0 coordinates), "c10d" (the agent on the host of
  // master_addr:control_port coordinates and hands node ranks out) or
  // "etcd-v2" (an etcd server at rdzv_endpoint names the coordinator).
  std::string rendezvous = kStaticRendezvous;
  std::string rdzv_endpoint;          // etcd-v2: the etcd server, host:port
  std::string local_addr;             // etcd-v2: this node's address as the others reach it ("" -> host name)
  // Elastic: the job runs on min_nnodes..nnodes nodes (0: exactly nnodes);
  // needs a rendezvous that hands node ranks out.
  int min_nnodes = 0;
  double last_call_timeout_s = 30;    // once min_nnodes joined, how long more may join before the start
  // --metrics-port: this agent serves /metrics and /job.json here (node 0:
  // the job's view, other nodes their own); 0 = off.
  int metrics_port = 0;
  std::string master_addr;  // "" -> "127.0.0.1" (single node only)
  // 0 -> a free port (single node, or the coordinator's pick for each
  // generation when node ranks are handed out); a port in use on node 0 -> error 4
  int master_port = 0;
  std::map<std::string, std::string> env;  // extra worker env, applied only where the agent's env lacks it
  std::map<std::string, std::string> env_overrides;  // set even over the agent's env (the user's explicit --env)
  std::string log_dir;                     // "" -> ${TMPDIR:-/tmp}/primus-<uid>/<run_id>
  // Beside our <host>.rank<R>.log: torchrun's files in each attempt
  // directory, <local rank>/{stdout,stderr}.log (raw, for the streams
  // redirects or tee name) and <local rank>/error.json, the workers'
  // TORCHELASTIC_ERROR_FILE; tools that glob for torchrun's layout find them.
  bool torchrun_log_files = false;
  // torchrun's --virtual-local-rank: LOCAL_RANK=0 for every worker and
  // CUDA_VISIBLE_DEVICES naming only its GPU (the agent's list at the local
  // rank, or the local rank itself when the agent has none).
  bool virtual_local_rank = false;
  // Frameworks whose own distributed variables each worker gets besides
  // torchrun's: "jax" (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES,
  // JAX_PROCESS_ID, ...), "tensorflow" (TF_CONFIG). worker_env.h.
  std::vector<std::string> framework_env;
  std::string run_id;                      // "" -> generated (<yyyymmdd-hhmmss>-<hex>)
  // Multi-node (nnodes > 1): node 0's control channel (job_link.h). The job
  // token comes from PRIMUS_JOB_TOKEN in the agent's environment.
  int control_port = 0;               // 0 -> master_port + 1
  double join_timeout_s = 300;        // start barrier
  double exit_barrier_timeout_s = 30;
  double heartbeat_interval_s = 1;
  double heartbeat_timeout_s = 10;
  int restarts_before = 0;            // restarts a scheduler already made (SLURM_RESTART_COUNT): count against max_restarts
  int max_restarts = 0;
  double restart_backoff_s = 1.0;  // doubled each restart, capped at max_restart_backoff_s
  double max_restart_backoff_s = 30.0;
  double term_timeout_s = 30.0;  // SIGTERM -> SIGKILL grace
  double hang_timeout_s = 0;     // 0 = off; else no output and no heartbeat touch for this long = hang
  // Once a worker exited 0, the others are stuck at exit when they stay
  // silent (no output, no heartbeat touch) this long: their stacks are taken
  // and they are stopped (ExitCode::kStuckAtExit). 0 = wait for them forever.
  double exit_grace_s = 60;
  // One bound for taking the stacks of every live worker after a hang or a
  // stuck exit (the dumps run in parallel); then the workers are stopped.
  double stack_timeout_s = 10;
  // Python workers load python/primus_stacks/sitecustomize.py (first on
  // their PYTHONPATH): on kStackSignal faulthandler writes every thread's
  // stack to the rank's <host>.rank<R>.pystacks.txt, so a hang has stacks
  // with no tool installed (stack_dump.h).
  bool stack_dumper = true;
  // PyTorch's NCCL flight recorder (torch >= 2.2; older releases ignore the
  // variables): TORCH_NCCL_TRACE_BUFFER_SIZE=2000, TORCH_NCCL_DUMP_ON_TIMEOUT=1
  // and the dump file and debug pipe in the attempt directory, each only
  // where the user set none; on a hang the agent has every rank dump.
  bool flight_recorder = true;
  // A node found bad (the hang's culprit, a failure again on the same node)
  // leaves the job, which goes on without it where it can: an elastic job
  // at the smaller size, a job whose launcher has a spare node (spare_nodes,
  // direct.spare_nodes, set by slurm srun and ssh) relaunched there by it
  // (the excluded node's agent exits 5).
  bool exclude_bad_nodes = false;
  int spare_nodes = 0;
  // Seconds between telemetry samples (docs/monitor.md); 0: no sampling at all.
  double telemetry_interval_s = 5;
  // Which framework's progress lines to read from the workers' output
  // (telemetry/progress_line.h; direct.progress_format, a backend's choice),
  // and the user's pattern for kRegex (direct.progress_regex).
  telemetry::ProgressFormat progress_format = telemetry::ProgressFormat::kAuto;
  std::string progress_regex;
  // TensorBoard events of the job (telemetry/tensorboard_feed.h), written by
  // node 0 while telemetry runs: direct.tensorboard; the directory is
  // <log_dir>/tensorboard unless set (train: <experiment>/tensorboard).
  bool tensorboard = true;
  std::string tensorboard_dir;
  // What the job runs, for the job view and primus_job_info (train sets them).
  std::string experiment_name, backend;
  // The host as ApplyPlatform detected it (its GPUs and routes, for
  // telemetry); null: RunWorkers detects it, only when telemetry is on.
  std::shared_ptr<const platform::HostInfo> host;
  std::vector<int> ranks_filter;  // global ranks shown on the console; empty = all (files keep all)
  std::vector<int> local_ranks_filter;  // local ranks shown on the console, on every node; empty = all
  // Streams kept off the console per local rank (torchrun's --redirects), and
  // those shown anyway (--tee); the files keep everything (console_filter.h).
  StreamSelection redirects, tee;
  // Workers' stderr lines go to the agent's stderr (torchrun's way) instead
  // of its stdout, where they keep their order with the stdout lines.
  bool stderr_to_stderr = false;
  std::string console_prefix = "[{host}:{rank}] ";  // {host} {rank} {local_rank} {node_rank} {stream}
  std::string role = "default";
  std::vector<WorkerPlacement> placements;  // one per local rank, or empty: no rank is bound
  // OMP_NUM_THREADS where the user has not set it: kCpuShare gives each
  // worker its share of the usable CPUs (its placement's CPUs when bound);
  // kTorchrun is torchrun's rule, 1 when more than one worker runs on the
  // node and nothing for a single worker.
  enum class OmpThreads { kCpuShare, kTorchrun };
  OmpThreads omp_threads = OmpThreads::kCpuShare;
};

// One worker that failed (or hung), as the banner and the snapshot see it.
struct WorkerFailure {
  std::string host;
  int rank = 0;
  int local_rank = 0;
  int pid = 0;
  int attempt = 0;
  int exit_code = 0;   // the worker's own code, or 128+signal
  int signal = 0;      // the signal that ended it; 0 when it exited
  bool hung = false;   // ended by the hang watchdog
  double hang_timeout_s = 0;  // the watchdog's timeout on the node that saw the hang
  double timestamp = 0;  // seconds since the epoch: the error file's when present, else detection
  double detected_at = 0;  // when the agent saw it end (or hang): orders failures within one second
  std::string log_file;
  std::string error_file;  // set when the worker wrote one
  std::string message;     // the error file's message
  std::string traceback;   // the error file's py_callstack
  // The last lines of its log, taken by the node that ran it: node 0's
  // banner shows them even when the log file is on another host.
  std::vector<std::string> log_tail;
};

struct RunResult {
  int exit_code = 0;  // the root cause's own code or 128+signal; 128+signal when the agent was signalled; 0 on success
  std::string log_dir;
  int restarts = 0;  // restarts performed
  std::string run_id;
  std::string master_addr;
  int master_port = 0;
  int agent_signal = 0;  // the signal that stopped the agent, 0 when none
  std::optional<WorkerFailure> root_cause;  // of the last attempt
  // Each failed attempt's root cause, oldest first: what caused each restart,
  // then the last attempt's when it failed too.
  std::vector<WorkerFailure> attempt_causes;
  std::vector<WorkerFailure> other_failures;
  // direct.exclude_bad_nodes: the host left out of the job, and why; this
  // node's own when exit_code is ExitCode::kNodeExcluded.
  std::vector<std::string> excluded_hosts;
  std::string exclusion_reason;
};

}  // namespace primus::agent
