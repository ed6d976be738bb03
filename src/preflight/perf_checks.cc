#include "preflight/perf_checks.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>

#include "io/signal_channel.h"
#include "io/stoppable_commands.h"
#include "util/progress_line.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::preflight {
namespace {

// The inter-node tests selected, run across every node (below CheckPerf).
void CheckInterNode(const platform::HostInfo& host, const std::string& self_binary, double timeout_s,
                    const PerfTests& tests, const PerfPlacement& placement, int* stop_signal,
                    std::vector<CheckResult>* results);


const std::string kPerf = "perf";

struct Collective {
  const char* op;    // benchmark comm --op
  const char* name;  // the check's name
};

std::string SizeArgument(const std::vector<int>& sizes_mb) {
  std::vector<std::string> words;
  for (int mb : sizes_mb) words.push_back(std::to_string(mb) + "M");
  return Join(words, ",");
}

std::string SizeList(const std::vector<int>& sizes_mb) {
  std::vector<std::string> words;
  for (int mb : sizes_mb) words.push_back(std::to_string(mb));
  return Join(words, ", ") + " MiB";
}

int GemmIterations(const PerfTests& tests) { return tests.quick ? 10 : 20; }

const std::vector<int>& IntraSizes(const PerfTests& tests) {
  return tests.intra_sizes_mb.empty() ? tests.sizes_mb : tests.intra_sizes_mb;
}
const std::vector<int>& InterSizes(const PerfTests& tests) {
  return tests.inter_sizes_mb.empty() ? tests.sizes_mb : tests.inter_sizes_mb;
}

// A number of `object` at `key` (0 when absent or of another type: a
// report is read, never trusted).
template <typename T>
T NumberAt(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<T>() : T{};
}

// The rows of a `benchmark comm --json` report as PASS checks ("<name> <size>
// MiB", "<bus bw> GB/s bus bandwidth<across>, results checked"); nullopt when
// the text holds no collective.
std::optional<std::vector<CheckResult>> CommReportChecks(const std::string& json, const std::string& name,
                                                         const std::string& across, int decimals) {
  auto report = nlohmann::json::parse(json, nullptr, false);
  if (!report.is_object()) return std::nullopt;
  auto collectives = report.find("collectives");
  if (collectives == report.end() || !collectives->is_array() || collectives->empty() ||
      !collectives->front().is_object()) {
    return std::nullopt;
  }
  std::vector<CheckResult> checks;
  auto rows = collectives->front().find("results");
  if (rows == collectives->front().end() || !rows->is_array()) return checks;
  for (const auto& row : *rows) {
    if (!row.is_object()) continue;
    int64_t mib = NumberAt<int64_t>(row, "size") >> 20;
    auto out_of_place = row.find("out_of_place");
    double busbw = out_of_place != row.end() && out_of_place->is_object() ? NumberAt<double>(*out_of_place, "bus_bw") : 0;
    checks.push_back(Pass(kPerf, fmt::format("{} {} MiB", name, mib),
                          fmt::format("{:.{}f} GB/s bus bandwidth{}, results checked", busbw, decimals, across),
                          "runs, results correct"));
  }
  return checks;
}

// One inter-node test: its check name, the benchmark's --op, its sizes, and
// whether it runs between the same GPU of every node (--stride).
struct InterTest {
  std::string name;
  const char* op;
  std::vector<int> sizes_mb;
  bool strided;
};

}  // namespace

PerfTests QuickPerfTests() {
  PerfTests tests;
  tests.sizes_mb = {64, 1024};
  tests.inter_all_reduce = true;
  tests.quick = true;
  return tests;
}

Result<std::vector<int>> ParseSizesMb(const std::string& list, const std::string& flag) {
  std::vector<int> sizes;
  for (const std::string& word : Split(list, ',')) {
    if (Trim(word).empty()) continue;
    auto value = ParseInt(Trim(word));
    if (!value || *value < 1 || *value > 65536) {
      return UsageError(flag + ": '" + word + "' is not a whole number of MiB from 1 to 65536", "write e.g. " + flag + " 64,1024");
    }
    sizes.push_back(static_cast<int>(*value));
  }
  if (sizes.empty()) return UsageError(flag + " needs at least one size", "write e.g. " + flag + " 64,1024");
  return sizes;
}

Result<PerfTests> ParsePerfTests(const std::string& list, PerfTests base) {
  const std::vector<std::string> ours = {"gemm",           "intra-allreduce", "intra-alltoall", "inter-allreduce",
                                         "inter-alltoall", "inter-p2p",       "inter-ring-p2p", "all"};
  const std::string valid = Join(ours, ", ");
  PerfTests tests = base;
  tests.gemm = tests.all_reduce = tests.all_to_all = false;
  tests.inter_all_reduce = tests.inter_all_to_all = tests.inter_p2p = tests.inter_ring_p2p = false;
  bool any = false;
  for (const std::string& raw : Split(ToLower(list), ',')) {
    std::string token(Trim(raw));
    if (token.empty()) continue;
    any = true;
    if (token == "all") {
      tests.gemm = tests.all_reduce = tests.all_to_all = true;
      tests.inter_all_reduce = tests.inter_all_to_all = tests.inter_p2p = tests.inter_ring_p2p = true;
    } else if (token == "gemm") tests.gemm = true;
    else if (token == "intra-allreduce") tests.all_reduce = true;
    else if (token == "intra-alltoall") tests.all_to_all = true;
    else if (token == "inter-allreduce") tests.inter_all_reduce = true;
    else if (token == "inter-alltoall") tests.inter_all_to_all = true;
    else if (token == "inter-p2p") tests.inter_p2p = true;
    else if (token == "inter-ring-p2p") tests.inter_ring_p2p = true;
    else return UsageError("--tests: unknown test '" + token + "'" + DidYouMean(token, ours), "tests: " + valid);
  }
  if (!any) return UsageError("--tests needs at least one test", "tests: " + valid);
  return tests;
}

std::string DescribePerfTests(const PerfTests& tests) {
  std::vector<std::string> parts;
  const std::vector<int>& intra = IntraSizes(tests);
  const std::vector<int>& inter = InterSizes(tests);
  if (tests.gemm) parts.push_back(fmt::format("gemm (bf16 8192^3, {} iterations)", GemmIterations(tests)));
  if (tests.all_reduce) parts.push_back("all-reduce at " + SizeList(intra));
  if (tests.all_to_all) parts.push_back("all-to-all at " + SizeList(intra));
  if (tests.inter_all_reduce) parts.push_back("inter-node all-reduce at " + SizeList(inter));
  if (tests.inter_all_to_all) parts.push_back("inter-node all-to-all at " + SizeList(inter));
  if (tests.inter_p2p) parts.push_back("inter-node send/recv at " + SizeList(inter));
  if (tests.inter_ring_p2p) parts.push_back("inter-node ring send/recv at " + SizeList(tests.ring_sizes_mb));
  return parts.empty() ? "none" : Join(parts, ", ");
}

CheckResult GemmVerdict(const std::string& name, double tflops, double peak_tflops) {
  if (peak_tflops <= 0) return Pass(kPerf, name, fmt::format("{:.1f} TFLOPS (no peak known for this device)", tflops));
  double share = tflops / peak_tflops;
  std::string value = fmt::format("{:.1f} TFLOPS ({:.0f}% of {:.0f})", tflops, share * 100, peak_tflops);
  if (share < 0.25) {
    return Fail(kPerf, name, value, ">= 50% of peak",
                "far below the device's speed: check clocks and power (rocm-smi / nvidia-smi -q -d CLOCK,POWER), thermal throttling, PCIe");
  }
  if (share < 0.5) {
    return Warn(kPerf, name, value, ">= 50% of peak", "slower than a healthy node: compare with its neighbours; check clocks and power");
  }
  return Pass(kPerf, name, value, ">= 50% of peak");
}

std::vector<CheckResult> CheckPerf(const platform::HostInfo& host, const std::string& self_binary, double timeout_s,
                                   const PerfTests& tests, int* stop_signal, const PerfPlacement& placement) {
  int ignored_signal = 0;
  if (stop_signal == nullptr) stop_signal = &ignored_signal;
  *stop_signal = 0;
  // One benchmark run, ended early by our own signal.
  auto run_benchmark = [&](const std::vector<std::string>& argv) {
    io::StoppableRun run = io::RunStoppable({{argv, {.timeout_s = timeout_s}}});
    *stop_signal = run.stop_signal;
    return run.results.front();
  };
  auto stopped = [&](const std::string& name) {
    return Fail(kPerf, name, "stopped by " + io::SignalName(*stop_signal) + " before it finished", "runs",
                "run preflight --perf again");
  };
  std::vector<CheckResult> results;
  std::vector<Collective> collectives;
  if (tests.all_reduce) collectives.push_back({"allreduce", "intra-allreduce"});  // named as --tests names it
  if (tests.all_to_all) collectives.push_back({"alltoall", "intra-alltoall"});
  if (host.gpus.empty()) {
    if (tests.gemm) {
      results.push_back(Skip(kPerf, "gemm", "no GPU: the performance screen is for GPU nodes (benchmark gemm measures CPUs)"));
    }
    for (const Collective& c : collectives) results.push_back(Skip(kPerf, c.name, "no GPU"));
    CheckInterNode(host, self_binary, timeout_s, tests, placement, stop_signal, &results);
    return results;
  }
  std::string gpus = std::to_string(host.gpus.size());
  // Each test is a benchmark run of seconds to minutes: on a terminal, say which.
  ProgressLine progress("preflight --perf: test");
  long total = (tests.gemm ? 1 : 0) + (host.gpus.size() < 2 ? 0 : static_cast<long>(collectives.size()));
  long done = 0;
  if (tests.gemm) {
    progress.Update(done++, total, "(gemm)");
    auto gemm = run_benchmark({self_binary, "--quiet", "direct", "--nproc-per-node", gpus, "--", "benchmark", "gemm",
                               "--device", "gpu", "--dtype", "bf16", "-M", "8192", "--iters",
                               std::to_string(GemmIterations(tests)), "--json"});
    if (*stop_signal != 0) {
      results.push_back(stopped("gemm"));
      return results;
    }
    auto report = gemm.ok() && gemm->exit_code == 0 ? nlohmann::json::parse(gemm->out, nullptr, false) : nlohmann::json();
    if (!report.is_object() || !report.contains("results")) {
      results.push_back(Fail(kPerf, "gemm", gemm.ok() ? std::string(Trim(gemm->Tail(2))) : gemm.error().message, "runs",
                             "run `primus-cli direct -- benchmark gemm --device gpu` to see the error"));
    } else {
      for (const auto& rank : report["results"]) {
        results.push_back(GemmVerdict(fmt::format("gemm GPU{}", rank.value("local_rank", 0)), rank.value("tflops", 0.0),
                                      rank.value("peak_tflops", 0.0)));
      }
    }
  }
  for (const Collective& c : collectives) {
    if (host.gpus.size() < 2) {
      results.push_back(Skip(kPerf, c.name, "one GPU: no collective between local GPUs"));
      continue;
    }
    progress.Update(done++, total, fmt::format("({})", c.name));
    std::vector<std::string> args = {"benchmark", "comm", "--device", "gpu", "--op", c.op, "--sizes",
                                     SizeArgument(IntraSizes(tests)), "-n", tests.quick ? "5" : "10", "-w",
                                     tests.quick ? "1" : "2", "-c", "1"};
    std::vector<std::string> argv = {self_binary, "--quiet", "direct", "--nproc-per-node", gpus, "--"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--json");
    auto comm = run_benchmark(argv);
    if (*stop_signal != 0) {
      results.push_back(stopped(c.name));
      return results;
    }
    auto rows = comm.ok() && comm->exit_code == 0 ? CommReportChecks(comm->out, c.name, "", 1) : std::nullopt;
    if (!rows) {
      results.push_back(Fail(kPerf, c.name, comm.ok() ? std::string(Trim(comm->Tail(2))) : comm.error().message,
                             "runs and checks", "run `primus-cli direct -- " + ShellJoin(args) + "` to see the error"));
      continue;
    }
    results.insert(results.end(), rows->begin(), rows->end());
  }
  if (*stop_signal == 0) CheckInterNode(host, self_binary, timeout_s, tests, placement, stop_signal, &results);
  return results;
}

namespace {

void CheckInterNode(const platform::HostInfo& host, const std::string& self_binary, double timeout_s,
                    const PerfTests& tests, const PerfPlacement& placement, int* stop_signal,
                    std::vector<CheckResult>* results) {
  std::vector<InterTest> selected;
  if (tests.inter_all_reduce) selected.push_back({"inter-allreduce", "allreduce", InterSizes(tests), false});
  if (tests.inter_all_to_all) selected.push_back({"inter-alltoall", "alltoall", InterSizes(tests), false});
  if (tests.inter_p2p) selected.push_back({"inter-p2p", "sendrecv", InterSizes(tests), true});
  if (tests.inter_ring_p2p) selected.push_back({"inter-ring-p2p", "sendrecv", tests.ring_sizes_mb, true});
  if (selected.empty()) return;
  if (placement.nnodes < 2) {
    for (const InterTest& test : selected) results->push_back(Skip(kPerf, test.name, "one node: nothing between nodes"));
    return;
  }
  if (placement.master_addr.empty() || placement.master_port <= 0 || placement.master_port + 11 > 65535) {
    for (const InterTest& test : selected) {
      results->push_back(Fail(kPerf, test.name, "no master address and port for the nodes to meet", "known",
                              "give --master-addr and --master-port on every node"));
    }
    return;
  }
  // GPUs: every GPU of every node (NCCL/RCCL); CPU hosts: one gloo worker per node.
  bool gpu = !host.gpus.empty();
  int per_node = gpu ? static_cast<int>(host.gpus.size()) : 1;
  bool first = true;
  for (const InterTest& test : selected) {
    if (!first && tests.cleanup_delay_s > 0) {
      // Primus's --comm-cleanup-delay-sec: the last run's listeners close on every node first.
      std::this_thread::sleep_for(std::chrono::duration<double>(tests.cleanup_delay_s));
    }
    first = false;
    std::vector<std::string> args = {"benchmark", "comm", "--device", gpu ? "gpu" : "cpu", "--op", test.op,
                                     "--sizes", SizeArgument(test.sizes_mb), "-n", tests.quick ? "5" : "10",
                                     "-w", tests.quick ? "1" : "2", "-c", "1"};
    if (test.strided && per_node > 1) {
      args.insert(args.end(), {"--stride", std::to_string(per_node), "--parallel-groups"});
    }
    std::vector<std::string> argv = {self_binary, "--quiet", "direct", "--nnodes", std::to_string(placement.nnodes),
                                     "--node-rank", std::to_string(placement.node_rank), "--master-addr",
                                     placement.master_addr, "--master-port", std::to_string(placement.master_port + 10),
                                     "--join-timeout", fmt::format("{:g}", placement.join_timeout_s),
                                     "--nproc-per-node", std::to_string(per_node), "--"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--json");
    io::StoppableRun run = io::RunStoppable({{argv, {.timeout_s = timeout_s + placement.join_timeout_s}}});
    *stop_signal = run.stop_signal;
    if (*stop_signal != 0) {
      results->push_back(Fail(kPerf, test.name, "stopped by " + io::SignalName(*stop_signal) + " before it finished",
                              "runs", "run preflight --perf again"));
      return;
    }
    const auto& outcome = run.results.front();
    std::string how = fmt::format("{} nodes x {} {}", placement.nnodes, per_node, gpu ? "GPUs" : "gloo worker");
    if (!outcome.ok() || outcome->exit_code != 0) {
      std::string tail = outcome.ok() ? std::string(Trim(outcome->Tail(2))) : outcome.error().message;
      results->push_back(Fail(kPerf, test.name, tail.empty() ? "the run across the nodes failed" : tail,
                              "runs across the nodes",
                              "a node that cannot reach the others on master port + 10 fails here: check the "
                              "interfaces (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME) and the firewall"));
      continue;
    }
    if (placement.node_rank != 0) {
      results->push_back(Pass(kPerf, test.name, "took part (" + how + "); node 0 reports the bandwidth", "runs"));
      continue;
    }
    auto rows = CommReportChecks(outcome->out, test.name, " across " + how, 2);
    if (!rows) {
      results->push_back(Fail(kPerf, test.name, "no report from rank 0", "runs and checks",
                              "run `primus-cli direct --nnodes N ... -- " + ShellJoin(args) + "` on every node"));
      continue;
    }
    results->insert(results->end(), rows->begin(), rows->end());
  }
}

}  // namespace
}  // namespace primus::preflight
