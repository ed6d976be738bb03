#include "benchmark/benchmark.h"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "benchmark/comm_plot.h"
#include "benchmark/comm_report_file.h"
#include "benchmark/comm_worker.h"
#include "benchmark/gemm_report.h"
#include "benchmark/gemm_worker.h"
#include "benchmark/model_gemm.h"
#include "benchmark/nccl_backend.h"
#include "benchmark/rank_groups.h"
#include "benchmark/rccl_request.h"
#include "benchmark/report_file.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"
#include "util/svg_chart.h"

namespace primus::benchmark {
namespace {

// The file names the workers write in the scratch directory.
std::string CommReportFile(const std::string& scratch_dir) { return scratch_dir + "/report.json"; }
std::string CommProgressFile(const std::string& scratch_dir) { return scratch_dir + "/progress"; }

// --output FILE on this node: every node writes its own rows (report_file.h).
Status WriteReport(const std::string& output_file, bool append, int node_rank, const ReportDocument& document) {
  if (output_file.empty()) return Status::Ok();
  auto format = ReportFileFormatFor(output_file, append, "--output");
  if (!format.ok()) return format.error();
  std::string path = NodeReportPath(output_file, node_rank);
  if (Status written = WriteReportFile(path, document, *format, append); !written.ok()) return written;
  log::Info("report {}: {}", append ? "rows added to" : "written to", path);
  return Status::Ok();
}

Result<BenchmarkRequest> GemmBenchmark(std::vector<std::string> args, std::string title,
                                       std::vector<std::string> settings) {
  auto gemm = ParseGemmRequest(args);
  if (!gemm.ok()) return gemm.error();
  for (const std::string& warning : gemm->warnings) log::Warn("{}", warning);  // the workers keep quiet about them
  BenchmarkRequest request;
  request.kind = BenchmarkKind::kGemm;
  request.args = std::move(args);
  request.gemm = std::move(*gemm);
  request.title = std::move(title);
  request.settings = std::move(settings);
  return request;
}

Result<BenchmarkRequest> CommBenchmark(std::vector<std::string> args, std::string title) {
  auto comm = ParseCommRequest(args);
  if (!comm.ok()) return comm.error();
  BenchmarkRequest request;
  request.kind = BenchmarkKind::kComm;
  request.args = std::move(args);
  request.output_file = comm->output_file;
  request.append = comm->append;
  request.comm = std::move(*comm);
  request.title = std::move(title);
  return request;
}

// gemm-dense, gemm-deepseek: the model's shapes through gemm.
Result<BenchmarkRequest> ModelGemmBenchmark(ModelFamily family, const std::vector<std::string>& args) {
  auto model = ParseModelGemmRequest(family, args);
  if (!model.ok()) return model.error();
  auto gemm_args = ModelGemmArgs(*model);
  if (!gemm_args.ok()) return gemm_args.error();
  return GemmBenchmark(std::move(*gemm_args), ModelGemmTitle(*model), ModelGemmSettings(*model));
}

// rccl, strided-allgather: their flags become comm arguments.
Result<BenchmarkRequest> TranslatedCommBenchmark(const std::string& subtask, const std::vector<std::string>& args) {
  auto translated = subtask == "rccl" ? TranslateRccl(args) : TranslateStridedAllgather(args);
  if (!translated.ok()) return translated.error();
  auto request = CommBenchmark(translated->comm_args, "benchmark " + subtask);
  if (!request.ok()) return request.error();
  request->translated = ShellJoin(translated->comm_args);
  request->output_file = translated->output_file;
  request->append = translated->append;
  request->cluster = translated->cluster;
  log::Debug("benchmark {} runs as: benchmark comm {}", subtask, request->translated);
  return request;
}

int GemmVerdict(const std::vector<GemmResult>& results) {
  for (const auto& result : results) {
    if (result.check.performed && !result.check.passed) return 1;
  }
  return 0;
}

Result<int> ReportGemm(const BenchmarkRequest& request, const std::string& scratch_dir, int node_rank) {
  auto results = ReadGemmResults(scratch_dir);
  if (!results.ok()) return results.error();
  switch (request.gemm.output) {
    case ReportFormat::kTable: std::cout << FormatGemmTable(*results); break;
    case ReportFormat::kCsv: std::cout << FormatGemmCsv(*results); break;
    case ReportFormat::kJson: std::cout << GemmReportJson(*results).dump(2) << "\n"; break;
  }
  std::cout << std::flush;
  if (!request.gemm.plot.empty()) {
    if (Status written = WriteSvgPlot(request.gemm.plot, GemmPlot(*results)); !written.ok()) return written.error();
    log::Info("TFLOPS plot: {}", request.gemm.plot);
  }
  Status report = WriteReport(request.gemm.output_file, request.gemm.append, node_rank,
                              GemmReportDocument(*results, request.title, request.settings));
  if (!report.ok()) return report.error();
  return GemmVerdict(*results);
}

// Rank 0 ran here when this is node 0: its report is in the scratch directory.
Result<int> ReportComm(const BenchmarkRequest& request, const std::string& scratch_dir) {
  std::string report_file = CommReportFile(scratch_dir);
  if (!PathExists(report_file) || (!request.comm.json && request.comm.plot.empty() && request.output_file.empty())) {
    return 0;
  }
  auto text = ReadFile(report_file);
  if (!text.ok()) return text.error();
  nlohmann::json report = nlohmann::json::parse(*text, nullptr, false);
  if (report.is_discarded()) return TaskError("rank 0's report " + report_file + " is not JSON");
  if (request.comm.json) std::cout << report.dump(2) << std::endl;
  if (!request.comm.plot.empty()) {
    if (Status written = WriteSvgPlot(request.comm.plot, BusBandwidthPlot(report)); !written.ok()) {
      return written.error();
    }
    log::Info("bus bandwidth plot: {}", request.comm.plot);
  }
  Status written = WriteReport(request.output_file, request.append, 0,
                               CommReportDocument(report, request.title, request.cluster));
  if (!written.ok()) return written.error();
  return 0;
}

}  // namespace

const std::vector<std::string>& Subtasks() {
  static const std::vector<std::string> names = {"gemm", "gemm-dense", "gemm-deepseek",
                                                 "comm", "rccl",       "strided-allgather"};
  return names;
}

const std::vector<OptionSpec>* SubtaskOptions(const std::string& subtask) {
  if (subtask == "gemm") return &GemmOptions();
  if (subtask == "gemm-dense") return &ModelGemmOptions(ModelFamily::kDense);
  if (subtask == "gemm-deepseek") return &ModelGemmOptions(ModelFamily::kDeepseek);
  if (subtask == "comm") return &CommOptions();
  if (subtask == "rccl") return &RcclOptions();
  if (subtask == "strided-allgather") return &StridedAllgatherOptions();
  return nullptr;
}

std::string SubtaskOptionHelp() {
  std::string text;
  for (const char* subtask : {"gemm", "comm", "gemm-dense", "gemm-deepseek", "rccl", "strided-allgather"}) {
    text += "\n" + std::string(subtask) + " options:\n" + FormatOptionHelp(*SubtaskOptions(subtask));
  }
  return text;
}

Result<BenchmarkRequest> ReadBenchmarkRequest(const std::string& subtask, const std::vector<std::string>& args) {
  if (subtask == "gemm") return GemmBenchmark(args, "benchmark gemm", {});
  if (subtask == "gemm-dense") return ModelGemmBenchmark(ModelFamily::kDense, args);
  if (subtask == "gemm-deepseek") return ModelGemmBenchmark(ModelFamily::kDeepseek, args);
  if (subtask == "comm") return CommBenchmark(args, "benchmark comm");
  if (subtask == "rccl" || subtask == "strided-allgather") return TranslatedCommBenchmark(subtask, args);
  return UsageError("unknown benchmark subtask '" + subtask + "'" + DidYouMean(subtask, Subtasks()),
                    "benchmark subtasks: " + Join(Subtasks(), ", "));
}

std::string BenchmarkTarget::Engine() const { return gpu ? std::string(GpuVendorName(vendor)) : "cpu"; }

Result<BenchmarkTarget> ChooseTarget(DeviceChoice choice, const platform::HostInfo& host) {
  BenchmarkTarget target;
  if (choice == DeviceChoice::kCpu) return target;
  if (!host.gpus.empty()) {
    target.gpu = true;
    target.vendor = host.gpus.front().vendor == "amd" ? GpuVendor::kAmd : GpuVendor::kNvidia;
    return target;
  }
  for (GpuVendor vendor : {GpuVendor::kNvidia, GpuVendor::kAmd}) {
    auto api = GpuApi::Open(vendor);
    if (!api.ok()) continue;
    auto count = api->DeviceCount();
    if (count.ok() && *count > 0) {
      log::Info("no GPU found in sysfs, but the {} sees {}: benchmarking on it", api->Describe(), *count);
      target.gpu = true;
      target.vendor = vendor;
      return target;
    }
  }
  if (choice == DeviceChoice::kGpu) {
    return UnavailableError("--device gpu, but no GPU was detected on this host",
                            "run on a GPU host, check *_VISIBLE_DEVICES, or use --device cpu");
  }
  return target;
}

Status CheckWorldSize(const BenchmarkRequest& request, int nnodes, int nproc_per_node) {
  if (request.kind != BenchmarkKind::kComm || request.comm.stride <= 0) return Status::Ok();
  // Said once here rather than by every rank.
  auto group = StridedGroup(0, nnodes * nproc_per_node, request.comm.stride);
  if (group.ok()) return Status::Ok();
  Error error = group.error();
  error.message += fmt::format(" ({} node(s) x {} worker(s))", nnodes, nproc_per_node);
  return error;
}

Result<std::vector<std::string>> WorkerCommand(const BenchmarkRequest& request, const BenchmarkTarget& target,
                                               const std::string& self, const std::string& scratch_dir,
                                               bool dry_run) {
  std::vector<std::string> argv;
  if (request.kind == BenchmarkKind::kGemm) {
    argv = {self, "benchmark", "worker", "gemm"};
    auto worker_args = GemmWorkerArgs(scratch_dir, target.Engine(), request.args);
    argv.insert(argv.end(), worker_args.begin(), worker_args.end());
    return argv;
  }
  if (target.gpu) {
    argv = {self, "benchmark", "worker", "comm", "--engine", target.Engine()};
  } else {
    std::string worker = JoinPath(DirName(self), "primus-comm-worker");
    if (!IsExecutableFile(worker) && !dry_run) {
      return UnavailableError("benchmark comm on CPUs needs " + worker + " (the gloo worker built beside primus-cli)",
                              "install libgloo-dev and rebuild (scripts/setup.sh && scripts/build.sh)");
    }
    argv = {worker};
  }
  auto worker_args =
      CommWorkerArgs(CommReportFile(scratch_dir), dry_run ? std::string() : CommProgressFile(scratch_dir), request.args);
  argv.insert(argv.end(), worker_args.begin(), worker_args.end());
  return argv;
}

std::string DescribeBenchmark(const BenchmarkRequest& request, const BenchmarkTarget& target, int node_rank) {
  std::ostringstream out;
  if (request.kind == BenchmarkKind::kGemm) {
    GemmPlan plan = PlanGemm(request.gemm, target.gpu);
    out << request.title << " on " << (target.gpu ? target.Engine() + " GPUs" : std::string("the CPU (OpenBLAS)"))
        << ": " << plan.shapes.size() << " shape(s) from " << plan.shapes.front().Describe() << ", "
        << GemmDtypeName(plan.dtype) << "\n";
    if (!request.gemm.shapes.empty()) {
      out << "shapes (M N K op, BLAS column-major):\n";
      for (const GemmShape& shape : plan.shapes) out << "  " << shape.Describe() << "\n";
    }
    if (!request.gemm.output_file.empty()) {
      out << "report file: " << NodeReportPath(request.gemm.output_file, node_rank)
          << (request.gemm.append ? " (rows added)" : "") << ", written after the run\n";
    }
    return out.str();
  }
  out << request.title << " with "
      << (target.gpu ? target.Engine() + " GPUs (NCCL/RCCL)" : std::string("gloo on CPUs")) << "\n";
  if (!request.translated.empty()) out << "runs as: benchmark comm " << request.translated << "\n";
  if (!request.output_file.empty()) {
    out << "report file: " << request.output_file << (request.append ? " (rows added)" : "")
        << ", written by node 0 after the run\n";
  }
  return out.str();
}

std::unique_ptr<ProgressFileWatch> WatchProgress(const BenchmarkRequest& request, const std::string& scratch_dir) {
  if (request.kind == BenchmarkKind::kGemm) {
    return std::make_unique<ProgressFileWatch>(GemmProgressFile(scratch_dir), request.title + ": shape");
  }
  return std::make_unique<ProgressFileWatch>(CommProgressFile(scratch_dir), request.title + ": row");
}

Result<int> ReportBenchmark(const BenchmarkRequest& request, const std::string& scratch_dir, int node_rank,
                            bool workers_succeeded) {
  if (request.kind == BenchmarkKind::kGemm) {
    if (!workers_succeeded) return 0;
    return ReportGemm(request, scratch_dir, node_rank);
  }
  return ReportComm(request, scratch_dir);
}

Result<int> RunBenchmarkWorker(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError("benchmark worker needs gemm or comm", "workers are started by `benchmark gemm|comm`");
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "gemm") return RunGemmWorker(rest);
  if (args[0] == "comm") {
    // --engine nvidia|amd [--report-file FILE] -- <the user's comm arguments>
    if (rest.size() < 2 || rest[0] != "--engine" || (rest[1] != "nvidia" && rest[1] != "amd")) {
      return UsageError("benchmark worker comm needs --engine nvidia|amd [--report-file FILE] -- ARGS",
                        "workers are started by `benchmark comm`");
    }
    GpuVendor vendor = rest[1] == "amd" ? GpuVendor::kAmd : GpuVendor::kNvidia;
    std::vector<std::string> worker_args(rest.begin() + 2, rest.end());
    return RunCommWorker(worker_args, [vendor](const CommWorkerContext& worker) { return OpenNcclBackend(vendor, worker); });
  }
  return UsageError("unknown benchmark worker '" + args[0] + "'");
}

}  // namespace primus::benchmark
