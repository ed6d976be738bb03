// The `run` task: start any command once per local rank as the job's
// workers, with torchrun's environment contract, under the node agent
// (src/agent, docs/agent.md). The direct.* launcher keys become the
// agent's LaunchSpec, the platform layer adds the detected GPU count, the
// environment plan and --numa-bind placement (tasks/worker_launch.h); the
// exit status is the root-cause worker's own, or direct.failure_exit_code
// when one is set (torchrun's 1).
#include <iostream>

#include "config/launcher_config.h"
#include "tasks/task.h"
#include "tasks/worker_launch.h"

namespace primus::tasks {
namespace {

class RunTask : public Task {
 public:
  std::string name() const override { return "run"; }
  std::string summary() const override { return "run any command as the job's workers (one per local rank)"; }
  std::string help() const override {
    return "usage: primus-cli [global options] direct [--nproc-per-node N|auto] [--nnodes N --node-rank R\n"
           "         --master-addr A --master-port P] -- run CMD [ARGS...]\n"
           "\n"
           "Starts CMD once per local rank with torchrun's environment (RANK, LOCAL_RANK,\n"
           "WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...), supervises it, and tears everything\n"
           "down on the first failure, exiting with that worker's own exit code.\n"
           "CMD runs as given (no implicit python): write `run python3 train.py`.\n"
           "Workers get the environment plan (profiles, network auto-config, --profile,\n"
           "--env); --dry-run prints it with the origin of every variable, and the layout.\n"
           "\nExamples:\n"
           "  primus-cli direct --nproc-per-node 8 -- run python3 train.py --epochs 1\n"
           "  primus-cli slurm srun -N 2 -- run bash -c 'echo $RANK of $WORLD_SIZE'\n"
           "\nExit codes: 0 every worker succeeded; the failing worker's own code; 2 bad arguments;\n"
           "128+N the launcher got signal N.\n";
  }
  // Everything after `run` belongs to the command, so `run CMD --help` is CMD's.
  bool IsHelpRequest(const std::vector<std::string>& args) const override {
    return !args.empty() && (args[0] == "--help" || args[0] == "-h");
  }

  Result<int> Run(const TaskContext& context) override {
    if (context.args.empty()) {
      return UsageError("task 'run' needs a command", "usage: primus-cli direct -- run CMD [ARGS...]");
    }
    if (context.launcher == nullptr) return UsageError("task 'run' has no launcher configuration");
    auto launch = PrepareWorkerLaunch(*context.launcher);
    if (!launch) return launch.error();
    launch->spec.argv = context.args;
    if (context.dry_run) {  // explain, start nothing
      std::cout << DescribeWorkerLaunch(*launch);
      return 0;
    }
    auto result = RunWorkerLaunch(*launch);
    if (!result) return result.error();
    bool as_torchrun = !context.command_line.empty() && context.command_line.front() == "torchrun";
    return WorkerLaunchExitCode(*result, *context.launcher, as_torchrun);
  }
};

TaskRegistration<RunTask> run_registration;

}  // namespace
}  // namespace primus::tasks
