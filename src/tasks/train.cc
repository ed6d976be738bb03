// The `train` task. Registered now so that the grammar, --help and
// --dry-run know it; its implementation lands with issue #5.
#include "tasks/task.h"

namespace primus::tasks {
namespace {

class TrainTask : public PendingTask {
 public:
  std::string name() const override { return "train"; }
  std::string summary() const override { return "train a model: pretrain | posttrain"; }
  std::vector<std::string> subtasks() const override { return {"pretrain", "posttrain"}; }
  std::string help() const override {
    return
        "usage: primus-cli <mode> ... -- train pretrain|posttrain --config FILE [key=value ...]\n"
        "         [--backend torch|megatron|torchtitan|command] [--replay DIR] [--resume auto|none|PATH]\n"
        "\n"
        "Trains through the node agent: one worker per GPU, restarts, per-rank logs,\n"
        "an experiment snapshot under the workspace, and --replay of an earlier run.\n";
  }
  std::string pending_reason() const override { return "the train task (experiment configs, hooks, snapshots) is issue #5"; }
};

TaskRegistration<TrainTask> registration;

}  // namespace
}  // namespace primus::tasks
