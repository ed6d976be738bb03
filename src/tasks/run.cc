// The `run` task: start any command once per local rank as the job's
// workers, with torchrun's environment contract, under the node agent
// (src/agent, docs/agent.md). The direct.* launcher keys become the
// agent's LaunchSpec; the exit status is the root-cause worker's own.
#include "agent/launch_spec_from_config.h"
#include "agent/run_workers.h"
#include "config/launcher_config.h"
#include "tasks/task.h"
#include "util/log.h"

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
           "CMD runs as given (no implicit python): write `run python3 train.py`.\n";
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
    auto spec = agent::LaunchSpecFromConfig(*context.launcher, context.args);
    if (!spec) return spec.error();
    if (context.launcher->GetBool("direct.numa_bind")) {
      log::Warn("direct.numa_bind is not implemented by the node agent yet: workers are not bound");
    }
    if (!context.launcher->GetString("direct.profile").empty()) {
      log::Warn("direct.profile is not implemented by the node agent yet: workers run without a profiler");
    }
    if (context.dry_run) return 0;  // the plan above is the answer
    auto result = agent::RunWorkers(*spec);
    if (!result) return result.error();
    return result->exit_code;
  }
};

TaskRegistration<RunTask> registration;

}  // namespace
}  // namespace primus::tasks
