// The `benchmark` task. Registered now so that the grammar, --help and
// --dry-run know it; its implementation lands with issue #9.
#include "tasks/task.h"

namespace primus::tasks {
namespace {

class BenchmarkTask : public PendingTask {
 public:
  std::string name() const override { return "benchmark"; }
  std::string summary() const override { return "measure GEMM and collective performance: gemm | comm"; }
  std::vector<std::string> subtasks() const override { return {"gemm", "comm"}; }
  std::string help() const override {
    return
        "usage: primus-cli <mode> ... -- benchmark gemm [-M M] [-N N] [-K K] [--dtype bf16|fp16|fp32|tf32|fp8] ...\n"
        "       primus-cli <mode> ... -- benchmark comm [--op allreduce|...|all] [-b MIN] [-e MAX] [-f FACTOR] ...\n"
        "\n"
        "gemm: cuBLASLt/hipBLASLt on GPUs, OpenBLAS on CPU; N and K default to M.\n"
        "comm: NCCL/RCCL on GPUs, gloo on CPU; nccl-tests-compatible output.\n";
  }
  std::string pending_reason() const override { return "the benchmark tasks (gemm, comm) are issue #9"; }
};

TaskRegistration<BenchmarkTask> registration;

}  // namespace
}  // namespace primus::tasks
