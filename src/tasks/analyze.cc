// The `analyze` task. Registered now so that the grammar, --help and
// --dry-run know it; its implementation lands with issue #8.
#include "tasks/task.h"

namespace primus::tasks {
namespace {

class AnalyzeTask : public PendingTask {
 public:
  std::string name() const override { return "analyze"; }
  std::string summary() const override { return "diagnose logs and runs, show topology: logs | run | topology"; }
  std::vector<std::string> subtasks() const override { return {"logs", "run", "topology"}; }
  std::string help() const override {
    return
        "usage: primus-cli <mode> ... -- analyze logs <experiment-dir|files...> [--json]\n"
        "       primus-cli <mode> ... -- analyze run <experiment-dir>\n"
        "       primus-cli <mode> ... -- analyze topology [--visualize]\n";
  }
  std::string pending_reason() const override { return "the analyze task is issue #8"; }
};

TaskRegistration<AnalyzeTask> registration;

}  // namespace
}  // namespace primus::tasks
