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
// The measurement code lives in src/benchmark/ (docs/benchmark.md).

#include <fmt/format.h>

#include <iostream>

#include "benchmark/comm_plot.h"
#include "benchmark/comm_report_file.h"
#include "benchmark/comm_request.h"
#include "benchmark/comm_worker.h"
#include "benchmark/gemm_report.h"
#include "benchmark/gemm_request.h"
#include "benchmark/gemm_worker.h"
#include "benchmark/gpu_runtime.h"
#include "benchmark/model_gemm.h"
#include "benchmark/nccl_backend.h"
#include "benchmark/progress_file.h"
#include "benchmark/rank_groups.h"
#include "benchmark/rccl_request.h"
#include "benchmark/report_file.h"
#include "config/launcher_config.h"
#include "tasks/task.h"
#include "tasks/worker_launch.h"
#include "util/files.h"
#include "util/log.h"
#include "util/option_parser.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using benchmark::DeviceChoice;
using benchmark::GpuVendor;
using benchmark::ReportDocument;

// What the workers run: this binary, or "primus-cli" on PATH when /proc cannot say.
std::string WorkerBinary() {
  Result<std::string> self = SelfExecutable();
  return self.ok() ? *self : std::string("primus-cli");
}

// Where the benchmark runs: GPUs of the detected vendor, or the CPU.
struct Target {
  bool gpu = false;
  GpuVendor vendor = GpuVendor::kNvidia;
  std::string Engine() const { return gpu ? std::string(benchmark::GpuVendorName(vendor)) : "cpu"; }
};

// GPUs come from the platform's detection (sysfs, procfs); where that finds
// none (a container without /sys/bus/pci), the vendor runtimes are asked.
Result<Target> ChooseTarget(DeviceChoice choice, const platform::HostInfo& host) {
  Target target;
  if (choice == DeviceChoice::kCpu) return target;
  if (!host.gpus.empty()) {
    target.gpu = true;
    target.vendor = host.gpus.front().vendor == "amd" ? GpuVendor::kAmd : GpuVendor::kNvidia;
    return target;
  }
  for (GpuVendor vendor : {GpuVendor::kNvidia, GpuVendor::kAmd}) {
    auto runtime = benchmark::GpuRuntime::Open(vendor);
    if (!runtime.ok()) continue;
    auto count = runtime->DeviceCount();
    if (count.ok() && *count > 0) {
      log::Info("no GPU found in sysfs, but the {} sees {}: benchmarking on it", runtime->Describe(), *count);
      target.gpu = true;
      target.vendor = vendor;
      return target;
    }
  }
  if (choice == DeviceChoice::kGpu) {
    return EnvironmentError("--device gpu, but no GPU was detected on this host",
                            "run on a GPU host, check *_VISIBLE_DEVICES, or use --device cpu");
  }
  return target;
}

// The launch of an agent-run benchmark (tasks/worker_launch.h): --device cpu
// means one CPU worker unless a count was given; the target follows the host
// the platform found.
struct BenchmarkLaunch {
  WorkerLaunch workers;
  Target target;
};

Result<BenchmarkLaunch> PrepareLaunch(const config::LauncherConfig& launcher, DeviceChoice device) {
  auto workers = PrepareWorkerLaunch(launcher, {}, [&](agent::LaunchSpec* spec) {
    if (device == DeviceChoice::kCpu && spec->nproc_per_node_auto) {
      spec->nproc_per_node = 1;
      spec->nproc_per_node_auto = false;
    }
  });
  if (!workers.ok()) return workers.error();
  auto target = ChooseTarget(device, workers->setup.host);
  if (!target.ok()) return target.error();
  return BenchmarkLaunch{std::move(*workers), *target};
}

int GemmExitCode(const std::vector<benchmark::GemmResult>& results) {
  for (const auto& result : results) {
    if (result.check.performed && !result.check.passed) return 1;
  }
  return 0;
}

// What a benchmark subtask adds around `gemm` or `comm`: its name and the
// report file's title and settings, and the lines the plan shows.
struct Framing {
  std::string title;                  // "benchmark gemm", "benchmark gemm-dense: Llama3.1_8B"
  std::vector<std::string> settings;  // report-file settings lines
  std::string translated;             // "" or the comm/gemm arguments it runs as (shown by --dry-run)
  // rccl's --output FILE and its options (gemm's are its own flags)
  std::string output_file;
  bool append = false;
  std::string cluster;
};

// --output FILE on this node: every node writes its own rows (report_file.h).
Status WriteReport(const std::string& output_file, bool append, int node_rank, const ReportDocument& document) {
  if (output_file.empty()) return Status::Ok();
  auto format = benchmark::ReportFileFormatFor(output_file, append, "--output");
  if (!format.ok()) return format.error();
  std::string path = benchmark::NodeReportPath(output_file, node_rank);
  if (Status written = benchmark::WriteReportFile(path, document, *format, append); !written.ok()) return written;
  log::Info("report {}: {}", append ? "rows added to" : "written to", path);
  return Status::Ok();
}

Result<int> RunGemm(const TaskContext& context, const std::vector<std::string>& args, const Framing& framing) {
  auto request = benchmark::ParseGemmRequest(args);
  if (!request.ok()) return request.error();
  for (const std::string& warning : request->warnings) log::Warn("{}", warning);  // the workers keep quiet about them
  auto launch = PrepareLaunch(*context.launcher, request->device);
  if (!launch.ok()) return launch.error();
  std::string engine = launch->target.Engine();
  if (context.dry_run) {
    launch->workers.spec.argv = {WorkerBinary(), "benchmark", "worker", "gemm"};
    auto worker_args = benchmark::GemmWorkerArgs("<scratch dir>", engine, args);
    launch->workers.spec.argv.insert(launch->workers.spec.argv.end(), worker_args.begin(), worker_args.end());
    benchmark::GemmPlan plan = benchmark::PlanGemm(*request, launch->target.gpu);
    std::cout << framing.title << " on " << (launch->target.gpu ? engine + " GPUs" : std::string("the CPU (OpenBLAS)")) << ": "
              << plan.shapes.size() << " shape(s) from " << plan.shapes.front().Describe() << ", "
              << benchmark::GemmDtypeName(plan.dtype) << "\n";
    if (!request->shapes.empty()) {
      std::cout << "shapes (M N K op, BLAS column-major):\n";
      for (const benchmark::GemmShape& shape : plan.shapes) std::cout << "  " << shape.Describe() << "\n";
    }
    if (!request->output_file.empty()) {
      std::cout << "report file: " << benchmark::NodeReportPath(request->output_file, launch->workers.spec.node_rank)
                << (request->append ? " (rows added)" : "") << ", written after the run\n";
    }
    std::cout << DescribeWorkerLaunch(launch->workers);
    return 0;
  }
  ScopedTempDir results_dir("gemm");
  if (results_dir.path().empty()) return EnvironmentError("cannot create a scratch directory under /tmp");
  launch->workers.spec.argv = {WorkerBinary(), "benchmark", "worker", "gemm"};
  auto worker_args = benchmark::GemmWorkerArgs(results_dir.path(), engine, args);
  launch->workers.spec.argv.insert(launch->workers.spec.argv.end(), worker_args.begin(), worker_args.end());
  Result<agent::RunResult> run = [&] {
    benchmark::ProgressFileWatch progress(benchmark::GemmProgressFile(results_dir.path()), framing.title + ": shape");
    return RunWorkerLaunch(launch->workers);
  }();
  if (!run.ok()) return run.error();
  if (run->exit_code != 0) return WorkerLaunchExitCode(*run, *context.launcher);
  auto results = benchmark::ReadGemmResults(results_dir.path());
  if (!results.ok()) return results.error();
  switch (request->output) {
    case benchmark::ReportFormat::kTable: std::cout << benchmark::FormatGemmTable(*results); break;
    case benchmark::ReportFormat::kCsv: std::cout << benchmark::FormatGemmCsv(*results); break;
    case benchmark::ReportFormat::kJson: std::cout << benchmark::GemmReportJson(*results).dump(2) << "\n"; break;
  }
  std::cout << std::flush;
  if (!request->plot.empty()) {
    if (Status written = WriteSvgPlot(request->plot, benchmark::GemmPlot(*results)); !written.ok()) {
      return written.error();
    }
    log::Info("TFLOPS plot: {}", request->plot);
  }
  Status report = WriteReport(request->output_file, request->append, launch->workers.spec.node_rank,
                              benchmark::GemmReportDocument(*results, framing.title, framing.settings));
  if (!report.ok()) return report.error();
  return GemmExitCode(*results);
}

// gemm-dense, gemm-deepseek: the model's shapes through `benchmark gemm`.
Result<int> RunModelGemm(const TaskContext& context, benchmark::ModelFamily family, const std::vector<std::string>& args) {
  auto request = benchmark::ParseModelGemmRequest(family, args);
  if (!request.ok()) return request.error();
  auto gemm_args = benchmark::ModelGemmArgs(*request);
  if (!gemm_args.ok()) return gemm_args.error();
  Framing framing{benchmark::ModelGemmTitle(*request), benchmark::ModelGemmSettings(*request), "", "", false, ""};
  return RunGemm(context, *gemm_args, framing);
}

Result<int> RunComm(const TaskContext& context, const std::vector<std::string>& args, const Framing& framing) {
  auto request = benchmark::ParseCommRequest(args);
  if (!request.ok()) return request.error();
  auto launch = PrepareLaunch(*context.launcher, request->device);
  if (!launch.ok()) return launch.error();
  agent::LaunchSpec& spec = launch->workers.spec;
  if (request->stride > 0) {
    // Said once here rather than by every rank.
    auto group = benchmark::StridedGroup(0, spec.nnodes * spec.nproc_per_node, request->stride);
    if (!group.ok()) {
      Error error = group.error();
      error.message += fmt::format(" ({} node(s) x {} worker(s))", spec.nnodes, spec.nproc_per_node);
      return error;
    }
  }
  // Rank 0's stdout is the nccl-tests table: no console prefix unless the user chose one.
  if (context.launcher->OriginOf("direct.console_prefix").source == "default") spec.console_prefix = "";
  auto worker_command = [&](const std::string& report_file,
                            const std::string& progress_file) -> Result<std::vector<std::string>> {
    std::vector<std::string> argv;
    if (launch->target.gpu) {
      argv = {WorkerBinary(), "benchmark", "worker", "comm", "--engine", launch->target.Engine()};
    } else {
      std::string worker = JoinPath(DirName(WorkerBinary()), "primus-comm-worker");
      if (!IsExecutableFile(worker) && !context.dry_run) {
        return EnvironmentError("benchmark comm on CPUs needs " + worker + " (the gloo worker built beside primus-cli)",
                                "install libgloo-dev and rebuild (scripts/setup.sh && scripts/build.sh)");
      }
      argv = {worker};
    }
    auto worker_args = benchmark::CommWorkerArgs(report_file, progress_file, args);
    argv.insert(argv.end(), worker_args.begin(), worker_args.end());
    return argv;
  };
  if (context.dry_run) {
    auto argv = worker_command("<scratch dir>/report.json", "");
    if (!argv.ok()) return argv.error();
    spec.argv = *argv;
    std::cout << framing.title << " with "
              << (launch->target.gpu ? launch->target.Engine() + " GPUs (NCCL/RCCL)" : std::string("gloo on CPUs")) << "\n";
    if (!framing.translated.empty()) std::cout << "runs as: benchmark comm " << framing.translated << "\n";
    if (!framing.output_file.empty()) {
      std::cout << "report file: " << framing.output_file << (framing.append ? " (rows added)" : "")
                << ", written by node 0 after the run\n";
    }
    std::cout << DescribeWorkerLaunch(launch->workers);
    return 0;
  }
  ScopedTempDir report_dir("comm");
  if (report_dir.path().empty()) return EnvironmentError("cannot create a scratch directory under /tmp");
  std::string report_file = report_dir.path() + "/report.json";
  std::string progress_file = report_dir.path() + "/progress";
  auto argv = worker_command(report_file, progress_file);
  if (!argv.ok()) return argv.error();
  spec.argv = *argv;
  Result<agent::RunResult> run = [&] {
    benchmark::ProgressFileWatch progress(progress_file, framing.title + ": row");
    return RunWorkerLaunch(launch->workers);
  }();
  if (!run.ok()) return run.error();
  // Rank 0 ran here when this is node 0: its report is in our scratch directory.
  if (PathExists(report_file) && (request->json || !request->plot.empty() || !framing.output_file.empty())) {
    auto text = ReadFile(report_file);
    if (!text.ok()) return text.error();
    nlohmann::json report = nlohmann::json::parse(*text, nullptr, false);
    if (report.is_discarded()) return TaskError("rank 0's report " + report_file + " is not JSON");
    if (request->json) std::cout << report.dump(2) << std::endl;
    if (!request->plot.empty()) {
      if (Status written = WriteSvgPlot(request->plot, benchmark::BusBandwidthPlot(report)); !written.ok()) {
        return written.error();
      }
      log::Info("bus bandwidth plot: {}", request->plot);
    }
    Status written = WriteReport(framing.output_file, framing.append, 0,
                                 benchmark::CommReportDocument(report, framing.title, framing.cluster));
    if (!written.ok()) return written.error();
  }
  return WorkerLaunchExitCode(*run, *context.launcher);
}

// `benchmark worker gemm|comm ...`: what the agent starts for each rank.
Result<int> RunWorker(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError("benchmark worker needs gemm or comm", "workers are started by `benchmark gemm|comm`");
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "gemm") return benchmark::RunGemmWorker(rest);
  if (args[0] == "comm") {
    // --engine nvidia|amd [--report-file FILE] -- <the user's comm arguments>
    if (rest.size() < 2 || rest[0] != "--engine" || (rest[1] != "nvidia" && rest[1] != "amd")) {
      return UsageError("benchmark worker comm needs --engine nvidia|amd [--report-file FILE] -- ARGS",
                        "workers are started by `benchmark comm`");
    }
    GpuVendor vendor = rest[1] == "amd" ? GpuVendor::kAmd : GpuVendor::kNvidia;
    std::vector<std::string> worker_args(rest.begin() + 2, rest.end());
    return benchmark::RunCommWorker(worker_args, [vendor](const benchmark::CommWorkerContext& worker) {
      return benchmark::OpenNcclBackend(vendor, worker);
    });
  }
  return UsageError("unknown benchmark worker '" + args[0] + "'");
}

class BenchmarkTask : public Task {
 public:
  std::string name() const override { return "benchmark"; }
  std::string summary() const override {
    return "measure GEMM and collective performance: gemm | gemm-dense | gemm-deepseek | comm | rccl | strided-allgather";
  }
  std::vector<std::string> subtasks() const override {
    return {"gemm", "gemm-dense", "gemm-deepseek", "comm", "rccl", "strided-allgather"};
  }
  std::vector<const std::vector<OptionSpec>*> options(const std::string& subtask) const override {
    if (subtask == "gemm") return {&benchmark::GemmOptions()};
    if (subtask == "gemm-dense") return {&benchmark::ModelGemmOptions(benchmark::ModelFamily::kDense)};
    if (subtask == "gemm-deepseek") return {&benchmark::ModelGemmOptions(benchmark::ModelFamily::kDeepseek)};
    if (subtask == "comm") return {&benchmark::CommOptions()};
    if (subtask == "rccl") return {&benchmark::RcclOptions()};
    if (subtask == "strided-allgather") return {&benchmark::StridedAllgatherOptions()};
    return {};
  }
  std::string help() const override {
    return "usage: primus-cli <mode> ... -- benchmark gemm [-M M] [-N N] [-K K] [--dtype bf16|fp16|fp32|tf32|fp8]\n"
           "         [--trans-a] [--trans-b] [--iters N | --duration S] [--warmup N] [--sweep] [--tune]\n"
           "         [--json | --csv] [--output FILE] [--plot FILE.svg] [--device auto|cpu|gpu]\n"
           "       primus-cli <mode> ... -- benchmark comm [--op allreduce|allgather|reducescatter|alltoall|broadcast|\n"
           "         sendrecv|all] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-c CHECK] [-d DTYPE]\n"
           "         [--json] [--plot FILE.svg] [--device auto|cpu|gpu]\n"
           "       primus-cli <mode> ... -- benchmark gemm-dense|gemm-deepseek [--model NAME] [dimensions] [--mbs N]\n"
           "       primus-cli <mode> ... -- benchmark rccl [--op OP...] [--sizes LIST | --min-bytes --max-bytes] ...\n"
           "       primus-cli <mode> ... -- benchmark strided-allgather [--sizes-mb LIST] [--stride N] [--parallel]\n"
           "\n"
           "gemm: cuBLASLt (NVIDIA) or hipBLASLt (AMD) on every local GPU at once, OpenBLAS on the CPU\n"
           "(fp32, whatever --dtype asks: the report says so). N and K default to M. Reports time,\n"
           "TFLOPS, percent of the device's peak, bandwidth and arithmetic intensity, checks the result,\n"
           "and names the slowest GPU.\n"
           "comm: NCCL/RCCL on GPUs (one rank per GPU; VCCL through LD_LIBRARY_PATH), gloo over TCP on\n"
           "CPUs (one rank per process: --nproc-per-node). Output in the nccl-tests layout; -c checks\n"
           "results for real; exit status 1 when an element is wrong. Across nodes, start it on every\n"
           "node as any multi-node job (docs/agent.md). Details: docs/benchmark.md.\n"
           "gemm-dense, gemm-deepseek: one transformer layer's GEMMs (fwd, wgrad, dgrad of each linear\n"
           "layer) from a model's dimensions, run by gemm. rccl, strided-allgather: Primus's collective\n"
           "benchmarks, run by comm (--dry-run shows the comm arguments).\n"
           "\ngemm options:\n" +
           FormatOptionHelp(benchmark::GemmOptions()) + "\ncomm options:\n" + FormatOptionHelp(benchmark::CommOptions()) +
           "\ngemm-dense options:\n" + FormatOptionHelp(benchmark::ModelGemmOptions(benchmark::ModelFamily::kDense)) +
           "\ngemm-deepseek options:\n" + FormatOptionHelp(benchmark::ModelGemmOptions(benchmark::ModelFamily::kDeepseek)) +
           "\nrccl options:\n" + FormatOptionHelp(benchmark::RcclOptions()) +
           "\nstrided-allgather options:\n" + FormatOptionHelp(benchmark::StridedAllgatherOptions());
  }

  Result<int> Run(const TaskContext& context) override {
    const std::vector<std::string>& args = context.args;
    if (args.empty()) {
      return UsageError("benchmark needs a subtask: " + Join(subtasks(), ", "),
                        "write: benchmark gemm -M 4096, or benchmark comm -b 8 -e 128M -f 2");
    }
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "worker") return RunWorker(rest);
    if (context.launcher == nullptr) return UsageError("task 'benchmark' has no launcher configuration");
    if (args[0] == "gemm") return RunGemm(context, rest, Framing{"benchmark gemm", {}, "", "", false, ""});
    if (args[0] == "gemm-dense") return RunModelGemm(context, benchmark::ModelFamily::kDense, rest);
    if (args[0] == "gemm-deepseek") return RunModelGemm(context, benchmark::ModelFamily::kDeepseek, rest);
    if (args[0] == "comm") return RunComm(context, rest, Framing{"benchmark comm", {}, "", "", false, ""});
    if (args[0] == "rccl" || args[0] == "strided-allgather") {
      auto translated = args[0] == "rccl" ? benchmark::TranslateRccl(rest) : benchmark::TranslateStridedAllgather(rest);
      if (!translated.ok()) return translated.error();
      Framing framing{"benchmark " + args[0], {}, ShellJoin(translated->comm_args), translated->output_file,
                      translated->append, translated->cluster};
      log::Debug("benchmark {} runs as: benchmark comm {}", args[0], framing.translated);
      return RunComm(context, translated->comm_args, framing);
    }
    return UsageError("unknown benchmark subtask '" + args[0] + "'" + DidYouMean(args[0], subtasks()),
                      "benchmark subtasks: " + Join(subtasks(), ", "));
  }
};

TaskRegistration<BenchmarkTask> benchmark_registration;

}  // namespace
}  // namespace primus::tasks
