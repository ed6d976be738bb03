// The `benchmark` task: `benchmark gemm` (GEMM throughput of the vendor
// BLAS: cuBLASLt, hipBLASLt, OpenBLAS on CPUs) and `benchmark comm`
// (collective bandwidth: NCCL/RCCL on GPUs, gloo on CPUs, printed exactly
// as nccl-tests prints it). Both run as workers of the node agent, one per
// local rank, so they work the same under direct, Slurm and Kubernetes:
//  - gemm: every local GPU at once (primus-cli itself is the worker:
//    `benchmark worker gemm ...`); each writes its results to a scratch
//    directory and this process prints one report, naming the slowest GPU.
//  - comm: one rank per GPU (primus-cli, NCCL opened at run time) or per
//    process on CPUs (primus-comm-worker, the gloo executable built beside
//    primus-cli); rank 0 prints the nccl-tests table.
// Primus's benchmarks of the same names run through these two:
//  - gemm-dense, gemm-deepseek: a model's GEMM shapes (benchmark/model_gemm.h)
//    become `gemm --shape ...`;
//  - rccl, strided-allgather: their flags become `comm` arguments
//    (benchmark/rccl_request.h), shown by --dry-run.
// --output FILE writes the report as a file too (benchmark/report_file.h);
// --json (and gemm's --csv) put the report on stdout in that format.
// The measurement code lives in src/benchmark/ (docs/benchmark.md); this
// file uses it through benchmark/benchmark.h alone.

#include <iostream>

#include "benchmark/benchmark.h"
#include "config/launcher_config.h"
#include "tasks/task.h"
#include "tasks/worker_launch.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using benchmark::BenchmarkRequest;
using benchmark::DeviceChoice;

// What the workers run: this binary, or "primus-cli" on PATH when /proc cannot say.
std::string WorkerBinary() {
  Result<std::string> self = SelfExecutable();
  return self.ok() ? *self : std::string("primus-cli");
}

// The launch of a benchmark (tasks/worker_launch.h): --device cpu means one
// CPU worker unless a count was given; the target follows the host the
// platform found.
struct BenchmarkLaunch {
  WorkerLaunch workers;
  benchmark::BenchmarkTarget target;
};

Result<BenchmarkLaunch> PrepareLaunch(const config::LauncherConfig& launcher, const BenchmarkRequest& request) {
  auto workers = PrepareWorkerLaunch(launcher, {}, [&](agent::LaunchSpec* spec) {
    if (request.device() == DeviceChoice::kCpu && spec->nproc_per_node_auto) {
      spec->nproc_per_node = 1;
      spec->nproc_per_node_auto = false;
    }
    // Rank 0's stdout may be the report itself: no console prefix unless the user chose one.
    if (request.bare_console() && launcher.OriginOf("direct.console_prefix").source == "default") {
      spec->console_prefix = "";
    }
  });
  if (!workers.ok()) return workers.error();
  auto target = benchmark::ChooseTarget(request.device(), workers->setup.host);
  if (!target.ok()) return target.error();
  return BenchmarkLaunch{std::move(*workers), *target};
}

// One benchmark: prepare the launch, then describe it (--dry-run) or run the
// workers in a scratch directory and report what they wrote.
Result<int> RunBenchmark(const TaskContext& context, const BenchmarkRequest& request) {
  auto launch = PrepareLaunch(*context.launcher, request);
  if (!launch.ok()) return launch.error();
  agent::LaunchSpec& spec = launch->workers.spec;
  if (Status fits = benchmark::CheckWorldSize(request, spec.nnodes, spec.nproc_per_node); !fits.ok()) {
    return fits.error();
  }
  if (context.dry_run) {
    auto argv = benchmark::WorkerCommand(request, launch->target, WorkerBinary(), "<scratch dir>", true);
    if (!argv.ok()) return argv.error();
    spec.argv = *argv;
    std::cout << benchmark::DescribeBenchmark(request, launch->target, spec.node_rank)
              << DescribeWorkerLaunch(launch->workers);
    return 0;
  }
  ScopedTempDir scratch(request.kind == benchmark::BenchmarkKind::kGemm ? "gemm" : "comm");
  if (scratch.path().empty()) return UnavailableError("cannot create a scratch directory under /tmp");
  auto argv = benchmark::WorkerCommand(request, launch->target, WorkerBinary(), scratch.path(), false);
  if (!argv.ok()) return argv.error();
  spec.argv = *argv;
  Result<agent::RunResult> run = [&] {
    auto progress = benchmark::WatchProgress(request, scratch.path());
    return RunWorkerLaunch(launch->workers);
  }();
  if (!run.ok()) return run.error();
  auto verdict = benchmark::ReportBenchmark(request, scratch.path(), spec.node_rank, run->exit_code == 0);
  if (!verdict.ok()) return verdict.error();
  if (run->exit_code != 0) return WorkerLaunchExitCode(*run, *context.launcher);
  return *verdict;
}

// One page per subtask: `benchmark SUBTASK --help`.
const std::vector<SubtaskPage>& Pages() {
  static const std::vector<SubtaskPage> pages = {
      {"gemm", "[-M M] [-N N] [-K K] [--dtype T] [--iters N | --duration S] [--json | --csv] [--output FILE]",
       "cuBLASLt (NVIDIA) or hipBLASLt (AMD) on every local GPU at once, OpenBLAS on the CPU (fp32, whatever "
       "--dtype asks: the report says so). N and K default to M. Reports time, TFLOPS, percent of the device's "
       "peak, bandwidth and arithmetic intensity, checks the result, and names the slowest GPU.",
       {"primus-cli direct -- benchmark gemm -M 8192 --dtype bf16",
        "primus-cli direct -- benchmark gemm --sweep --json > gemm.json",
        "primus-cli slurm srun -N 2 -- benchmark gemm -M 4096 --output gemm.csv"}},
      {"gemm-dense", "[--model NAME] [dimensions] [--mbs N] [--dtype T] [--output FILE]",
       "one dense transformer layer's GEMMs (fwd, wgrad, dgrad of each linear layer) from a model's dimensions, "
       "run by gemm.",
       {"primus-cli direct -- benchmark gemm-dense --model Llama3.1_8B --output dense.md"}},
      {"gemm-deepseek", "[--model NAME] [dimensions] [--mbs N] [--dtype T] [--output FILE]",
       "one DeepSeek (MLA and MoE) layer's GEMMs from a model's dimensions, run by gemm.",
       {"primus-cli direct -- benchmark gemm-deepseek --model deepseek_v3 --json"}},
      {"comm",
       "[--op OP[,OP]|all] [--min-bytes B --max-bytes B --step-factor F | --sizes LIST] [--dtype T] "
       "[--iters N] [--warmup N] [--json] [--output FILE]",
       "NCCL/RCCL on GPUs (one rank per GPU), gloo over TCP on CPUs (one rank per process: --nproc-per-node). "
       "Output in the nccl-tests layout (its -b/-e/-f/-n/-w/-d/-c spellings are taken too); the results are "
       "checked for real: exit status 1 when an element is wrong. Across nodes, start it on every node as any "
       "multi-node job.",
       {"primus-cli direct --nproc-per-node 8 -- benchmark comm --max-bytes 1G --step-factor 2",
        "primus-cli direct --nproc-per-node 2 -- benchmark comm --device cpu --sizes 1M,16M --json"}},
      {"rccl", "[--op OP...] [--sizes LIST | --min-bytes B --max-bytes B] [--dtype T] [--output FILE]",
       "Primus's collective benchmark, run by comm (--dry-run shows the comm arguments); Primus's flags that "
       "have no equivalent here are refused with what to write instead.",
       {"primus-cli direct --nproc-per-node 8 -- benchmark rccl --op all_reduce all_gather --output rccl.md"}},
      {"strided-allgather", "[--sizes-mb LIST] [--stride N] [--parallel] [--dtype T]",
       "Primus's strided all-gather: all-gather in groups of every Nth rank, run by comm --stride (one table "
       "per group, so no --json or --output).",
       {"primus-cli direct --nproc-per-node 16 -- benchmark strided-allgather --stride 8"}},
  };
  return pages;
}

constexpr const char* kBenchmarkExitCodes =
    "Exit codes: 0 measured and checked, 1 a result was wrong, 2 bad arguments, 4 no device or library.\n";

class BenchmarkTask : public Task {
 public:
  std::string name() const override { return "benchmark"; }
  std::string summary() const override {
    return "measure GEMM and collective performance: gemm | gemm-dense | gemm-deepseek | comm | rccl | strided-allgather";
  }
  std::vector<std::string> subtasks() const override { return benchmark::Subtasks(); }
  std::vector<const std::vector<OptionSpec>*> options(const std::string& subtask) const override {
    const std::vector<OptionSpec>* table = benchmark::SubtaskOptions(subtask);
    if (table == nullptr) return {};
    return {table};
  }
  std::string help() const override {
    return "usage: primus-cli <mode> ... -- benchmark SUBTASK [options]\n"
           "       primus-cli <mode> ... -- benchmark SUBTASK --help     (that subtask's options)\n"
           "\n" +
           FormatSubtaskOverview(Pages()) +
           "\nOne spelling across the family: --dtype, --iters, --warmup, --min-bytes/--max-bytes/--sizes,\n"
           "--json (standard output), --output FILE (the format from its name), --plot FILE.svg\n"
           "(docs/cli.md). Details: docs/benchmark.md.\n\n" +
           kBenchmarkExitCodes + benchmark::SubtaskOptionHelp();
  }
  std::string subtask_help(const std::string& subtask) const override {
    for (const SubtaskPage& page : Pages()) {
      if (subtask != page.name) continue;
      return FormatSubtaskPage("primus-cli <mode> ... -- benchmark", page, *benchmark::SubtaskOptions(subtask),
                               std::string(kBenchmarkExitCodes) +
                                   "All subtasks: primus-cli benchmark --help. Details: docs/benchmark.md.\n");
    }
    return "";
  }

  Result<int> Run(const TaskContext& context) override {
    const std::vector<std::string>& args = context.args;
    if (args.empty()) {
      return UsageError("benchmark needs a subtask: " + Join(subtasks(), ", "),
                        "write: benchmark gemm -M 4096, or benchmark comm -b 8 -e 128M -f 2");
    }
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "worker") return benchmark::RunBenchmarkWorker(rest);
    if (context.launcher == nullptr) return UsageError("task 'benchmark' has no launcher configuration");
    auto request = benchmark::ReadBenchmarkRequest(args[0], rest);
    if (!request.ok()) return request.error();
    return RunBenchmark(context, *request);
  }
};

TaskRegistration<BenchmarkTask> benchmark_registration;

}  // namespace
}  // namespace primus::tasks
