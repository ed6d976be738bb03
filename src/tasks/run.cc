// The `run` task: start any command once per local rank as the job's
// workers, with torchrun's environment contract, under the node agent.
// TODO(agent, issue #3): replace PendingTask with a task that builds an
// agent::LaunchSpec from the `direct.*` launcher keys and calls RunWorkers.
#include "tasks/task.h"

namespace primus::tasks {
namespace {

class RunTask : public PendingTask {
 public:
  std::string name() const override { return "run"; }
  std::string summary() const override { return "run any command as the job's workers (one per local rank)"; }
  std::string help() const override {
    return "usage: primus-cli [global options] direct [--nproc-per-node N|auto] [--nnodes N --node-rank R\n"
           "         --master-addr A --master-port P] -- run CMD [ARGS...]\n"
           "\n"
           "Starts CMD once per local rank with torchrun's environment (RANK, LOCAL_RANK,\n"
           "WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...), supervises it, and tears everything\n"
           "down on the first failure, exiting with that worker's own exit code.\n";
  }
  // Everything after `run` belongs to the command, so `run CMD --help` is CMD's.
  bool IsHelpRequest(const std::vector<std::string>& args) const override {
    return !args.empty() && (args[0] == "--help" || args[0] == "-h");
  }
  std::string pending_reason() const override { return "the node agent is issue #3"; }
};

TaskRegistration<RunTask> registration;

}  // namespace
}  // namespace primus::tasks
