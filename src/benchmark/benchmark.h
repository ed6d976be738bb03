// The benchmark layer as other layers use it: run a GEMM, run a collective,
// and describe them. The `benchmark` task (tasks/benchmark.cc) reads a
// subtask's arguments into a BenchmarkRequest, starts the workers this
// header names as node agent workers (one per local rank), and hands their
// scratch directory back here for the report; every other header of
// src/benchmark/ is the layer's own.
//
//   gemm            GEMM throughput: cuBLASLt, hipBLASLt, OpenBLAS on CPUs
//   gemm-dense,     a model's GEMM shapes (model_gemm.h), run as gemm
//   gemm-deepseek
//   comm            collective bandwidth: NCCL/RCCL on GPUs, gloo on CPUs,
//                   printed exactly as nccl-tests prints it
//   rccl,           Primus's collective benchmarks: their flags become comm
//   strided-allgather  arguments (rccl_request.h), shown by --dry-run
//
// The workers: gemm runs `primus-cli benchmark worker gemm ...` on every
// local GPU at once, each writing its results to the scratch directory;
// comm runs one rank per GPU (`primus-cli benchmark worker comm ...`) or per
// process on CPUs (primus-comm-worker, the gloo executable built beside
// primus-cli), and rank 0 writes the report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "benchmark/comm_request.h"
#include "benchmark/gemm_request.h"
#include "benchmark/gpu_api.h"
#include "benchmark/progress_file.h"
#include "benchmark/request_flags.h"
#include "platform/host_info.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::benchmark {

// The subtasks, in the order --help lists them, and each one's flag table
// (nullptr for a name that is not a subtask).
const std::vector<std::string>& Subtasks();
const std::vector<OptionSpec>* SubtaskOptions(const std::string& subtask);
// The flag tables as --help prints them, one section per subtask.
std::string SubtaskOptionHelp();

enum class BenchmarkKind { kGemm, kComm };

// One benchmark as the user asked for it: what runs (gemm or comm, with its
// arguments) and how its report is framed.
struct BenchmarkRequest {
  BenchmarkKind kind = BenchmarkKind::kGemm;
  std::vector<std::string> args;  // the gemm or comm arguments the workers get
  GemmRequest gemm;               // kind kGemm: args read
  CommRequest comm;               // kind kComm: args read
  std::string title;              // "benchmark gemm", "benchmark gemm-dense: Llama3.1_8B"
  std::vector<std::string> settings;  // report-file settings lines
  std::string translated;         // "" or the comm arguments rccl/strided-allgather run as
  // rccl's --output FILE and its options (gemm's are its own flags)
  std::string output_file;
  bool append = false;
  std::string cluster;

  DeviceChoice device() const { return kind == BenchmarkKind::kGemm ? gemm.device : comm.device; }
  // comm: rank 0's stdout is the nccl-tests table, so the workers' console
  // lines go without a prefix unless the user chose one.
  bool bare_console() const { return kind == BenchmarkKind::kComm; }
};

// Reads a subtask (gemm, gemm-dense, gemm-deepseek, comm, rccl,
// strided-allgather) and its arguments; a usage error names the flag.
// Warnings about the arguments are logged here, once, not by every worker.
Result<BenchmarkRequest> ReadBenchmarkRequest(const std::string& subtask, const std::vector<std::string>& args);

// Where the benchmark runs: GPUs of one vendor, or the CPU.
struct BenchmarkTarget {
  bool gpu = false;
  GpuVendor vendor = GpuVendor::kNvidia;
  std::string Engine() const;  // "nvidia", "amd" or "cpu"
};

// GPUs come from the platform's detection (sysfs, procfs); where that finds
// none (a container without /sys/bus/pci), the vendor runtimes are asked.
// An unavailable error when --device gpu finds none.
Result<BenchmarkTarget> ChooseTarget(DeviceChoice choice, const platform::HostInfo& host);

// A usage error when the job's world (nodes x workers per node) cannot hold
// the request's rank groups (comm --stride).
Status CheckWorldSize(const BenchmarkRequest& request, int nnodes, int nproc_per_node);

// The command every worker runs. `self` is this primus-cli; `scratch_dir`
// the directory the workers write into ("<scratch dir>" for --dry-run,
// which also skips the check that primus-comm-worker exists).
Result<std::vector<std::string>> WorkerCommand(const BenchmarkRequest& request, const BenchmarkTarget& target,
                                               const std::string& self, const std::string& scratch_dir,
                                               bool dry_run);

// --dry-run: what would run, before the worker launch's own description.
std::string DescribeBenchmark(const BenchmarkRequest& request, const BenchmarkTarget& target, int node_rank);

// While the workers run: their progress on the console (rows or shapes
// done), read from the scratch directory; it stops when destroyed.
std::unique_ptr<ProgressFileWatch> WatchProgress(const BenchmarkRequest& request, const std::string& scratch_dir);

// After the workers ended: the report on stdout (table, CSV or JSON), the
// --plot file and this node's --output report file. Returns the
// benchmark's own verdict: 1 when a gemm result check failed, else 0 (the
// workers' exit code is the caller's). Nothing is read when gemm's workers
// failed, nor for comm when rank 0 did not run on this node.
Result<int> ReportBenchmark(const BenchmarkRequest& request, const std::string& scratch_dir, int node_rank,
                            bool workers_succeeded);

// `benchmark worker gemm|comm ...`: what the agent starts for each rank.
Result<int> RunBenchmarkWorker(const std::vector<std::string>& args);

}  // namespace primus::benchmark
