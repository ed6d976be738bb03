// `direct`: run the task on this host. For agent-run tasks (run, train,
// benchmark, preflight) the node agent starts one worker per GPU here; the
// options below are its inputs (torchrun's flags, underscores accepted).
#include "util/environment.h"
#include "config/slurm_settings.h"
#include "runtime/runtime.h"
#include "tasks/task.h"
#include "tasks/task_scripts.h"
#include "util/log.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

class DirectRuntime : public Runtime {
 public:
  std::string name() const override { return "direct"; }
  std::string summary() const override { return "run the task on this host (node agent: one worker per GPU)"; }
  std::string usage() const override {
    return "primus-cli [global options] direct [direct options] -- <task> [subtask] [args]";
  }
  std::vector<std::string> examples() const override {
    return {
        "primus-cli direct -- train pretrain --config exp.yaml",
        "primus-cli direct --nproc-per-node 2 -- run python3 train.py --epochs 1",
        "primus-cli direct --single --script train.py -- --lr 1e-3",
        "primus-cli direct --nnodes 2 --node-rank 0 --master-addr node0 -- train pretrain --config exp.yaml",
    };
  }
  std::string details() const override {
    return "Inside a Slurm allocation or a Kubernetes pod the distributed settings are derived\n"
           "from the scheduler's environment unless given here. torchrun spellings\n"
           "(--nproc_per_node, PET_* variables) are accepted.\n";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--nproc-per-node"}, K::kValue, "N|auto", "direct.nproc_per_node", "workers on this node (auto: visible GPUs, else 1)"},
        {{"--nnodes"}, K::kValue, "N|MIN:MAX", "direct.nnodes", "number of nodes in the job; MIN:MAX: elastic (needs --rendezvous c10d or etcd-v2)"},
        {{"--rendezvous"}, K::kValue, "static|c10d|etcd-v2", "direct.rendezvous",
         "static: node ranks given, node 0 coordinates; c10d: the agent on --master-addr's host coordinates at --control-port and hands node ranks out; etcd-v2: an etcd server names it"},
        {{"--rdzv-endpoint"}, K::kValue, "HOST:PORT", "direct.rdzv_endpoint", "etcd-v2: the etcd server"},
        {{"--telemetry-interval"}, K::kValue, "SECONDS", "direct.telemetry_interval", "sample GPUs, workers and their metrics this often; node 0 writes <log dir>/telemetry/ (0: off)"},
        {{"--tensorboard"}, K::kValue, "true|false", "direct.tensorboard", "node 0 writes TensorBoard event files under <log dir>/tensorboard (default true)"},
        {{"--progress-format"}, K::kValue, "FORMAT", "direct.progress_format", "read progress from the workers' output: auto, megatron, torchtitan, hf, nanogpt, primus, regex, none"},
        {{"--progress-regex"}, K::kValue, "RE2", "direct.progress_regex", "with --progress-format regex: a pattern with named groups (step, loss, lr, ...)"},
        {{"--last-call-timeout"}, K::kValue, "SECONDS", "direct.last_call_timeout", "elastic: once the minimum joined, how long more nodes may join before the start"},
        {{"--node-rank"}, K::kValue, "R", "direct.node_rank", "this node's rank (0..nnodes-1)"},
        {{"--master-addr"}, K::kValue, "ADDR", "direct.master_addr", "address of node 0 (never reverse-resolved)"},
        {{"--master-port"}, K::kValue, "PORT", "direct.master_port", "rendezvous port (default: a free port)"},
        {{"--platform"}, K::kValue, "auto|slurm|mpi|pytorchjob|jobset|platform|none", "direct.platform", "where the distributed settings come from"},
        {{"--control-port"}, K::kValue, "PORT", "direct.control_port", "node 0's control channel port (default: master port + 1)"},
        {{"--metrics-port"}, K::kValue, "PORT", "direct.metrics_port", "serve /metrics (Prometheus) and /job.json on this port (node 0: the job; other nodes: their own)"},
        {{"--join-timeout"}, K::kValue, "SECONDS", "direct.join_timeout", "how long nodes wait for each other at start"},
        {{"--exit-barrier-timeout"}, K::kValue, "SECONDS", "direct.exit_barrier_timeout", "how long node 0 waits for every node's end"},
        {{"--heartbeat-timeout"}, K::kValue, "SECONDS", "direct.heartbeat_timeout", "a node silent this long is lost"},
        {{"--max-restarts"}, K::kValue, "N", "direct.max_restarts", "restart all workers up to N times on failure"},
        {{"--restart-backoff"}, K::kValue, "SECONDS", "direct.restart_backoff", "first restart delay, doubled each time (capped)"},
        {{"--term-timeout"}, K::kValue, "SECONDS", "direct.term_timeout", "grace between SIGTERM and SIGKILL at teardown"},
        {{"--hang-timeout"}, K::kValue, "SECONDS", "direct.hang_timeout", "a worker silent this long is reported as hung (0: off)"},
        {{"--exit-grace"}, K::kValue, "SECONDS", "direct.exit_grace",
         "once a worker exited 0, the others may stay silent this long before they are stopped as stuck at exit (0: wait forever)"},
        {{"--log-dir"}, K::kValue, "DIR", "direct.log_dir", "per-rank log files go here"},
        {{"--framework-env"}, K::kValue, "jax,tensorflow", "direct.framework_env",
         "also give each worker JAX's (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID) or TensorFlow's (TF_CONFIG) variables"},
        {{"--ranks-filter"}, K::kValue, "R,R", "direct.ranks_filter", "show only these global ranks on the console (files keep all)"},
        {{"--local-ranks-filter"}, K::kValue, "R,R", "direct.local_ranks_filter", "show only these local ranks on the console, on every node"},
        {{"--redirects"}, K::kValue, "0-3|R:0-3,...", "direct.redirects", "keep streams off the console (1 stdout, 2 stderr, 3 both; files keep all)"},
        {{"--tee"}, K::kValue, "0-3|R:0-3,...", "direct.tee", "show these streams on the console even when redirected"},
        {{"--console-prefix"}, K::kValue, "TEMPLATE", "direct.console_prefix", "console line prefix: {host} {rank} {local_rank} {node_rank}"},
        {{"--env"}, K::kKeyValue, "K=V|FILE", "direct.env",
         "set a variable for the workers; FILE: one KEY=VALUE per line (a K=V flag wins over a file)", true},
        {{"--patch"}, K::kValue, "FILE", "direct.patch", "run a patch script before the task", true},
        {{"--hooks-dir"}, K::kValue, "DIR", "direct.hooks_dir", "extra hook directory", true},
        {{"--numa-bind", "--numa"}, K::kFlag, "", "direct.numa_bind", "bind each rank to its GPU's NUMA node"},
        {{"--no-numa"}, K::kFlag, "", "direct.numa_bind", "do not bind ranks to NUMA nodes (the default)", false, true},
        {{"--profile"}, K::kValue, "NAME", "direct.profile", "apply a named environment profile"},
        {{"--standalone"}, K::kFlag, "", "", "single node with a free port (torchrun compatibility; the default)"},
        {{"--single"}, K::kFlag, "", "", "one worker on this node, on its own: --nproc-per-node 1 --nnodes 1 --node-rank 0"},
        {{"--script"}, K::kValue, "FILE", "",
         "each worker runs python3 FILE with the arguments after '--' (the same as: -- run python3 FILE ARGS)"},
    };
    return table;
  }

  Result<int> Execute(const RuntimeContext& context) override {
    const Invocation& invocation = *context.invocation;
    tasks::Task* task = tasks::TaskRegistry::Global().Find(invocation.task);
    if (!task) return UsageError("unknown task '" + invocation.task + "'");
    // A multi-node Slurm allocation's batch script is not a step: one node
    // only. A task that starts no workers may run there.
    Status placed = task->in_process() ? Status::Ok()
                                       : config::CheckDirectInSlurmAllocation(ProcessEnvironment(), *context.launcher);
    if (!placed.ok() && !context.dry_run) return placed.error();
    if (!placed.ok()) log::Warn("{} (a real run stops here, exit 4)", placed.error().message);
    tasks::TaskContext task_context;
    task_context.args = invocation.task_args;
    // Hooks and patches run here for run, benchmark and preflight (train runs
    // its own, which see its experiment); other tasks refuse --patch. Our
    // torchrun behaves as torchrun: no hooks.
    if (invocation.task != "train" && invocation.program.empty()) {
      auto args = tasks::RunTaskScripts(*context.launcher, invocation.task, invocation.task_args, context.dry_run);
      if (!args.ok()) return args.error();
      task_context.args = std::move(*args);
    }
    task_context.command_line = context.command_line;
    task_context.launcher = context.launcher;
    task_context.dry_run = context.dry_run;
    task_context.debug = context.debug;
    return task->Run(task_context);
  }
};

RuntimeRegistration<DirectRuntime> direct_registration;

}  // namespace
}  // namespace primus::runtime
