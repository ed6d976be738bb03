// The `preflight` task. Registered now so that the grammar, --help and
// --dry-run know it; its implementation lands with issue #8.
#include "tasks/task.h"

namespace primus::tasks {
namespace {

class PreflightTask : public PendingTask {
 public:
  std::string name() const override { return "preflight"; }
  std::string summary() const override { return "check hosts, GPUs, network and software before a job"; }
  std::vector<std::string> subtasks() const override { return {"check"}; }
  std::string help() const override {
    return
        "usage: primus-cli <mode> ... -- preflight [check] [--host] [--gpu] [--network] [--software] [--perf] [--all]\n"
        "         [--expect-gpus N] [--expect-model M] [--json FILE] [--report DIR]\n"
        "\n"
        "Every check reports PASS, WARN, FAIL or SKIP with the value, the expectation and a fix.\n";
  }
  std::string pending_reason() const override { return "the preflight task is issue #8"; }
};

TaskRegistration<PreflightTask> registration;

}  // namespace
}  // namespace primus::tasks
