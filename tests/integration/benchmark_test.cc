// `benchmark gemm` and `benchmark comm` through the real binary: GEMM on the
// CPU (OpenBLAS), gloo collectives across 2 and 4 processes on loopback and
// across "hosts" made of network namespaces, the result check passing and
// catching a corrupted rank, and every table read back by a parser written
// from nccl-tests' output format (below), as users' scripts read it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "netns_hosts.h"
#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

// ---- A reader of nccl-tests output, from its format ----
// A section runs from "# Collective test starting: <program>" to
// "# Collective test concluded: <program>". Comment lines start with '#'.
// The column header is "# size count type redop root" then "time algbw
// busbw #wrong" twice (out-of-place, in-place). A result row is any line not
// starting with '#' with 13 whitespace-separated fields: size (B), count
// (elements), type, redop, root, then time (us), algbw (GB/s), busbw (GB/s)
// and #wrong (a number, or N/A) for each mode. The footer has
// "# Out of bounds values : <n> OK|FAILED" and "# Avg bus bandwidth : <x>".
struct NcclHalf {
  double time_us = 0, algbw = 0, busbw = 0;
  std::optional<int64_t> wrong;  // nullopt: N/A
};
struct NcclRow {
  size_t size = 0, count = 0;
  std::string type, redop;
  int root = 0;
  NcclHalf out_of_place, in_place;
};
struct NcclRank {
  int rank = 0;
  std::string host;
};
struct NcclSection {
  std::string program;
  bool has_column_header = false;
  std::vector<NcclRank> ranks;
  std::vector<NcclRow> rows;
  std::optional<int64_t> out_of_bounds;
  std::string out_of_bounds_status;
  std::optional<double> avg_busbw;
  bool concluded = false;
};

NcclHalf ParseHalf(const std::vector<std::string>& f, size_t at) {
  NcclHalf half;
  half.time_us = std::stod(f[at]);
  half.algbw = std::stod(f[at + 1]);
  half.busbw = std::stod(f[at + 2]);
  if (f[at + 3] != "N/A") half.wrong = std::stoll(f[at + 3]);
  return half;
}

// Sections of `text`; `error` says what did not parse.
std::vector<NcclSection> ParseNcclTests(const std::string& text, std::string* error) {
  std::vector<NcclSection> sections;
  std::regex rank_line(R"(^#  Rank +(\d+) Group +\d+ Pid +\d+ on +(\S+) device +-?\d+ \[[^\]]*\] .*$)");
  std::regex oob(R"(^# Out of bounds values : (\d+) (OK|FAILED)$)");
  std::regex avg(R"(^# Avg bus bandwidth +: ([0-9.eE+-]+) ?$)");
  const std::vector<std::string> columns = {"size", "count", "type", "redop", "root", "time", "algbw",
                                            "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"};
  for (const std::string& line : Split(text, '\n')) {
    std::smatch m;
    if (line.starts_with("# Collective test starting: ")) {
      sections.push_back({});
      sections.back().program = line.substr(28);
      continue;
    }
    if (sections.empty()) continue;
    NcclSection& s = sections.back();
    if (std::regex_match(line, m, rank_line)) {
      s.ranks.push_back({std::stoi(m[1]), m[2]});
    } else if (std::regex_match(line, m, oob)) {
      s.out_of_bounds = std::stoll(m[1]);
      s.out_of_bounds_status = m[2];
    } else if (std::regex_match(line, m, avg)) {
      s.avg_busbw = std::stod(m[1]);
    } else if (line.starts_with("# Collective test concluded: ")) {
      s.concluded = line.substr(29) == s.program;
    } else if (line.starts_with("#")) {
      std::istringstream words(line.substr(1));
      std::vector<std::string> fields;
      for (std::string word; words >> word;) fields.push_back(word);
      if (fields == columns) s.has_column_header = true;
    } else if (!Trim(line).empty()) {
      std::istringstream words(line);
      std::vector<std::string> f;
      for (std::string word; words >> word;) f.push_back(word);
      if (f.size() != 13) {
        *error += "not a result row: '" + line + "'\n";
        continue;
      }
      NcclRow row;
      row.size = std::stoull(f[0]);
      row.count = std::stoull(f[1]);
      row.type = f[2];
      row.redop = f[3];
      row.root = std::stoi(f[4]);
      row.out_of_place = ParseHalf(f, 5);
      row.in_place = ParseHalf(f, 9);
      s.rows.push_back(row);
    }
  }
  return sections;
}

double BusFactor(const std::string& program, int n) {
  if (program == "all_reduce_perf") return 2.0 * (n - 1) / n;
  if (program == "broadcast_perf" || program == "sendrecv_perf") return 1.0;
  return static_cast<double>(n - 1) / n;
}

// The arithmetic nccl-tests documents, on the printed (rounded) numbers.
void ExpectConsistentRow(const NcclSection& s, const NcclRow& row, int nranks) {
  for (const NcclHalf& half : {row.out_of_place, row.in_place}) {
    ASSERT_GT(half.time_us, 0) << s.program << " " << row.size;
    double algbw = static_cast<double>(row.size) / (half.time_us * 1e-6) / 1e9;
    EXPECT_NEAR(half.algbw, algbw, 0.006 + algbw * 0.01) << s.program << " " << row.size;
    EXPECT_NEAR(half.busbw, half.algbw * BusFactor(s.program, nranks), 0.011 + half.algbw * 0.01)
        << s.program << " " << row.size;
  }
}

// ---- the fixture ----

class BenchmarkTest : public ::testing::Test {
 protected:
  ProcessOptions Isolated() const {
    ProcessOptions options =
        IsolatedOptions(dir_.path(), {"PRIMUS_BENCHMARK_CORRUPT_RANK", "GLOO_SOCKET_IFNAME", "OMP_NUM_THREADS"});
    options.timeout_s = 120;
    return options;
  }
  ProcessResult Run(const std::string& line, ProcessOptions options) const {
    ProcessResult result = RunPrimus(Split(line, ' '), options);
    return result;
  }
  ProcessResult Run(const std::string& line) const { return Run(line, Isolated()); }
  TempDir dir_;
};

// ---- benchmark gemm on the CPU ----

TEST_F(BenchmarkTest, GemmOnTheCpuIsCheckedAndSaysWhatItComputed) {
  ProcessResult result = Run("benchmark gemm -M 192 -N 128 -K 160 --device cpu --iters 3");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("OpenBLAS"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("TFLOPS"), std::string::npos);
  EXPECT_NE(result.out.find("fp32(bf16)"), std::string::npos) << "bf16 asked, fp32 computed: " << result.out;
  EXPECT_NE(result.out.find("note: bf16 asked: the CPU path computes fp32"), std::string::npos) << result.out;
  std::regex row(R"(\n +0 +\S+ +cpu: .* +192 +128 +160 +NN +fp32\(bf16\) +3 +\d+\(\d+\) +([0-9.]+) +([0-9.]+) +- +([0-9.]+) +([0-9.]+) +ok \(full 24576\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, row)) << result.out;
  double ms = std::stod(m[1]), tflops = std::stod(m[2]);
  EXPECT_GT(tflops, 0);
  EXPECT_NEAR(tflops, 2.0 * 192 * 128 * 160 / (ms * 1e-3) / 1e12, 0.01 + tflops * 0.02);
  EXPECT_NEAR(std::stod(m[4]), 2.0 * 192 * 128 * 160 / ((192 * 160 + 160 * 128 + 192 * 128) * 4.0), 0.1) << "FLOP/B";
}

TEST_F(BenchmarkTest, GemmSweepAsJsonWithPlot) {
  ProcessResult result = Run("benchmark gemm --sweep -M 512 --dtype fp32 --trans-b --device cpu --iters 2 --json --plot tflops.svg");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  nlohmann::json report = nlohmann::json::parse(result.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << result.out;
  ASSERT_EQ(report["results"].size(), 2u);
  EXPECT_EQ(report["results"][0]["m"], 256);
  EXPECT_EQ(report["results"][1]["k"], 512);
  for (const auto& r : report["results"]) {
    EXPECT_TRUE(r["check"]["passed"].get<bool>());
    EXPECT_TRUE(r["trans_b"].get<bool>());
    EXPECT_EQ(r["dtype_used"], "fp32");
    EXPECT_GE(r["rotation_sets"].get<int>(), 2);
    EXPECT_GT(r["tflops"].get<double>(), 0);
  }
  auto svg = ReadFile(dir_.path() + "/tflops.svg");
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(svg->find("<polyline"), std::string::npos);
}

TEST_F(BenchmarkTest, GemmCsv) {
  ProcessResult result = Run("benchmark gemm -M 64 --device cpu --iters 2 --csv");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::vector<std::string> lines = Split(Trim(result.out), '\n');
  ASSERT_EQ(lines.size(), 2u) << result.out;
  EXPECT_TRUE(lines[0].starts_with("rank,host,device,")) << lines[0];
  EXPECT_EQ(Split(lines[0], ',').size(), 29u) << "the last column names the shape (--shape)";
}

TEST_F(BenchmarkTest, GemmOldOutputFormatSpellingWorksWithADeprecationNote) {
  ProcessResult old = Run("benchmark gemm -M 64 --device cpu --iters 2 --output json");
  ASSERT_EQ(old.exit_code, 0) << old.all();
  nlohmann::json report = nlohmann::json::parse(old.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "still JSON on stdout: " << old.out;
  EXPECT_EQ(report["results"].size(), 1u);
  EXPECT_NE(old.err.find("--output json is deprecated: use --json"), std::string::npos) << old.err;
  EXPECT_EQ(old.err.find("is deprecated"), old.err.rfind("is deprecated")) << "said once, not by every worker: " << old.err;
  ProcessResult file = Run("benchmark gemm -M 64 --device cpu --iters 2 --json --output r.csv");
  ASSERT_EQ(file.exit_code, 0) << file.all();
  EXPECT_FALSE(nlohmann::json::parse(file.out, nullptr, false).is_discarded()) << file.out;
  EXPECT_TRUE(ReadFile(dir_.path() + "/r.csv").ok()) << "--output FILE is the report file";
  EXPECT_EQ(file.err.find("deprecated"), std::string::npos) << file.err;
}

TEST_F(BenchmarkTest, GemmUsageErrorsNameTheFlag) {
  ProcessResult dtype = Run("benchmark gemm --dtype fp64 --device cpu");
  EXPECT_EQ(dtype.exit_code, 2) << dtype.all();
  EXPECT_NE(dtype.err.find("--dtype"), std::string::npos) << dtype.err;
  ProcessResult plot = Run("benchmark gemm --plot out.png --device cpu");
  EXPECT_EQ(plot.exit_code, 2);
  ProcessResult subtask = Run("benchmark gemn");
  EXPECT_EQ(subtask.exit_code, 2);
  EXPECT_NE(subtask.err.find("did you mean 'gemm'"), std::string::npos) << subtask.err;
}

TEST_F(BenchmarkTest, GemmOnGpusWithoutGpusIsUnavailable) {
  if (PathExists("/proc/driver/nvidia") || PathExists("/sys/class/kfd/kfd/topology/nodes")) {
    GTEST_SKIP() << "this host has a GPU driver: the GPU path is exercised by bench/gpu_bench.sh";
  }
  ProcessResult result = Run("benchmark gemm --device gpu");
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find("no GPU was detected"), std::string::npos) << result.err;
}

// ---- benchmark comm with gloo, on loopback ----

TEST_F(BenchmarkTest, CommTwoProcessesChecksPassAndTheTableParses) {
  ProcessResult result = Run("direct --nproc-per-node 2 -- benchmark comm -b 1K -e 1M -f 4 -n 4 -w 1 --device cpu");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::string error;
  std::vector<NcclSection> sections = ParseNcclTests(result.out, &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(sections.size(), 1u) << result.out;
  const NcclSection& s = sections[0];
  EXPECT_EQ(s.program, "all_reduce_perf");
  EXPECT_TRUE(s.has_column_header);
  EXPECT_TRUE(s.concluded);
  ASSERT_EQ(s.ranks.size(), 2u);
  ASSERT_EQ(s.rows.size(), 6u) << "1K 4K 16K 64K 256K 1M";
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const NcclRow& row = s.rows[i];
    EXPECT_EQ(row.size, size_t{1024} << (2 * i));
    EXPECT_EQ(row.count, row.size / 4);
    EXPECT_EQ(row.type, "float");
    EXPECT_EQ(row.redop, "sum");
    EXPECT_EQ(row.root, -1);
    EXPECT_EQ(row.out_of_place.wrong, 0);
    EXPECT_EQ(row.in_place.wrong, 0);
    ExpectConsistentRow(s, row, 2);
  }
  EXPECT_EQ(s.out_of_bounds, 0);
  EXPECT_EQ(s.out_of_bounds_status, "OK");
  ASSERT_TRUE(s.avg_busbw.has_value());
  double sum = 0;
  for (const NcclRow& row : s.rows) sum += row.out_of_place.busbw + row.in_place.busbw;
  EXPECT_NEAR(*s.avg_busbw, sum / 12, 0.01 + sum / 12 * 0.01);
  EXPECT_NE(result.out.find("# Slowest rank         : "), std::string::npos);
  EXPECT_EQ(result.out.find("[ERROR]"), std::string::npos) << "stdout is the table only";
}

TEST_F(BenchmarkTest, CommFourProcessesEveryCollective) {
  ProcessResult result = Run("direct --nproc-per-node 4 -- benchmark comm --op all -b 4K -e 64K -f 4 -n 3 -w 1 -d half --device cpu");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::string error;
  std::vector<NcclSection> sections = ParseNcclTests(result.out, &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(sections.size(), 6u) << result.out;
  std::vector<std::string> programs;
  for (const NcclSection& s : sections) {
    programs.push_back(s.program);
    EXPECT_EQ(s.ranks.size(), 4u);
    ASSERT_EQ(s.rows.size(), 3u) << s.program;
    EXPECT_EQ(s.out_of_bounds, 0) << s.program;
    bool in_place_checked = s.program != "alltoall_perf" && s.program != "sendrecv_perf";
    for (const NcclRow& row : s.rows) {
      EXPECT_EQ(row.type, "half");
      EXPECT_EQ(row.out_of_place.wrong, 0) << s.program << " " << row.size;
      EXPECT_EQ(row.in_place.wrong, in_place_checked ? std::optional<int64_t>(0) : std::nullopt) << s.program;
      ExpectConsistentRow(s, row, 4);
    }
    if (s.program == "all_gather_perf") {
      EXPECT_EQ(s.rows[0].count, 4096u / 2 / 4) << "per-rank count";
    }
    if (s.program == "broadcast_perf") {
      EXPECT_EQ(s.rows[0].root, 0);
    }
  }
  EXPECT_EQ(programs, (std::vector<std::string>{"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf",
                                                "alltoall_perf", "broadcast_perf", "sendrecv_perf"}));
}

TEST_F(BenchmarkTest, CommOneProcessEveryCollective) {
  ProcessResult result = Run("benchmark comm --op all -b 1K -e 4K -f 4 -n 2 -w 1 --device cpu");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::string error;
  std::vector<NcclSection> sections = ParseNcclTests(result.out, &error);
  ASSERT_EQ(sections.size(), 6u) << result.all();
  for (const NcclSection& s : sections) {
    EXPECT_EQ(s.out_of_bounds, 0) << s.program;
    ASSERT_EQ(s.rows.size(), 2u);
    EXPECT_EQ(s.rows[1].out_of_place.wrong, 0) << s.program;
  }
}

TEST_F(BenchmarkTest, CommCorruptedRankIsDetected) {
  ProcessOptions options = Isolated();
  options.env["PRIMUS_BENCHMARK_CORRUPT_RANK"] = "1";
  ProcessResult result = Run("direct --nproc-per-node 2 -- benchmark comm -b 1K -e 16K -f 4 -n 2 -w 1 --device cpu", options);
  EXPECT_EQ(result.exit_code, 1) << result.all();
  std::string error;
  std::vector<NcclSection> sections = ParseNcclTests(result.out, &error);
  ASSERT_EQ(sections.size(), 1u) << result.all();
  ASSERT_EQ(sections[0].rows.size(), 3u);
  for (const NcclRow& row : sections[0].rows) {
    EXPECT_GT(row.out_of_place.wrong.value_or(0), 0);
    EXPECT_GT(row.in_place.wrong.value_or(0), 0);
  }
  EXPECT_EQ(sections[0].out_of_bounds, 6);
  EXPECT_EQ(sections[0].out_of_bounds_status, "FAILED");
  EXPECT_NE(result.all().find("the result checks failed on rank 1 (6 elements)"), std::string::npos) << result.all();
}

TEST_F(BenchmarkTest, CommJsonAndPlot) {
  ProcessResult result = Run("direct --nproc-per-node 2 -- benchmark comm --op reducescatter -b 8K -e 32K -f 2 -n 2 -w 1 -d bf16 --json --plot busbw.svg --device cpu");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  nlohmann::json report = nlohmann::json::parse(result.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "stdout must be JSON only:\n" << result.out;
  ASSERT_EQ(report["collectives"].size(), 1u);
  const auto& section = report["collectives"][0];
  EXPECT_EQ(section["name"], "reduce_scatter_perf");
  ASSERT_EQ(section["results"].size(), 3u);
  EXPECT_EQ(section["results"][0]["type"], "bfloat16");
  EXPECT_EQ(section["results"][0]["out_of_place"]["nwrong"], 0);
  EXPECT_TRUE(section["out_of_bounds"]["okay"].get<bool>());
  EXPECT_EQ(report["devices"].size(), 2u);
  auto svg = ReadFile(dir_.path() + "/busbw.svg");
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(svg->find("reduce_scatter_perf out-of-place"), std::string::npos);
}

// The family's spellings (--dtype, --warmup, --iters, --min-bytes ...) and
// --output FILE with the format from its name, whose fields are the JSON's.
TEST_F(BenchmarkTest, CommTakesTheFamilysSpellingsAndWritesItsResultsToAFile) {
  ProcessResult result = Run(
      "direct --nproc-per-node 2 -- benchmark comm --op allgather --min-bytes 8K --max-bytes 16K --step-factor 2 "
      "--iters 2 --warmup 1 --dtype bfloat16 --device cpu --output out/comm.csv");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::vector<std::string> lines = Split(Trim(Slurp(dir_.path() + "/out/comm.csv")), '\n');
  ASSERT_EQ(lines.size(), 3u) << "a header and one row per size";
  EXPECT_EQ(lines[0], "collective,size,count,type,redop,root,time,alg_bw,bus_bw,nwrong,in_place_time,in_place_alg_bw,"
                      "in_place_bus_bw,in_place_nwrong");
  EXPECT_TRUE(lines[1].starts_with("allgather,8192,")) << lines[1];
  ProcessResult jsonl = Run(
      "direct --nproc-per-node 2 -- benchmark comm --op allgather --sizes 8K --iters 1 --warmup 0 --device cpu "
      "--output comm.jsonl");
  ASSERT_EQ(jsonl.exit_code, 0) << jsonl.all();
  nlohmann::ordered_json record = nlohmann::ordered_json::parse(Trim(Slurp(dir_.path() + "/comm.jsonl")));
  std::string keys;
  for (const auto& [key, value] : record.items()) keys += (keys.empty() ? "" : ",") + key;
  EXPECT_EQ(keys, lines[0]) << "the same names in every format";
  ProcessResult wrong = Run("direct --nproc-per-node 2 -- benchmark comm --device cpu --output comm.txt");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("--output comm.txt"), std::string::npos) << wrong.err;
}

TEST_F(BenchmarkTest, CommDryRunNamesTheGlooWorkerAndRunsNothing) {
  ProcessResult result = Run("--dry-run direct --nproc-per-node 2 -- benchmark comm --device cpu -b 8 -e 1M -f 2");
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("gloo on CPUs"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("primus-comm-worker"), std::string::npos) << result.out;
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path())) << "nothing created under --dry-run";
}

TEST_F(BenchmarkTest, CommWithoutTheGlooWorkerSaysWhatIsMissing) {
  std::string copy = dir_.path() + "/bin/primus-cli";
  ASSERT_TRUE(MakeDirs(dir_.path() + "/bin").ok());
  std::filesystem::copy_file(PRIMUS_BINARY, copy);
  ProcessResult result = RunProcess({copy, "direct", "--nproc-per-node", "2", "--", "benchmark", "comm", "--device", "cpu"}, Isolated());
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find(dir_.path() + "/bin/primus-comm-worker"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("libgloo-dev"), std::string::npos) << result.err;
}

// ---- across hosts (network namespaces): slow ----

class BenchmarkHostsTest : public BenchmarkTest {};

TEST_F(BenchmarkHostsTest, GlooAcrossTwoHostsWithTwoRanksEach) {
  auto made = NetnsHosts::Create(2);
  ASSERT_TRUE(made.ok()) << made.error().Format();
  std::unique_ptr<NetnsHosts> hosts = std::move(*made);
  std::vector<HostProcess> agents;
  for (int node = 0; node < 2; ++node) {
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--nnodes", "2", "--node-rank", std::to_string(node),
                                     "--master-addr", hosts->Address(1), "--master-port", "29500",
                                     "--nproc-per-node", "2", "--log-dir", fmt::format("{}/logs{}", hosts->dir(), node),
                                     "--", "benchmark", "comm", "--op", "all", "-b", "4K", "-e", "256K", "-f", "8",
                                     "-n", "3", "-w", "1", "--device", "cpu"};
    ProcessOptions options = Isolated();
    options.cwd = hosts->dir();
    options.env["PRIMUS_JOB_TOKEN"] = "benchmark-test-token";
    agents.push_back(hosts->Start(node + 1, argv, options));
    ASSERT_TRUE(agents.back().started());
  }
  int node0 = agents[0].Wait(90), node1 = agents[1].Wait(90);
  EXPECT_EQ(node0, 0) << agents[0].All();
  EXPECT_EQ(node1, 0) << agents[1].All();
  std::string error;
  std::vector<NcclSection> sections = ParseNcclTests(agents[0].Out(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(sections.size(), 6u) << agents[0].All();
  for (const NcclSection& s : sections) {
    ASSERT_EQ(s.ranks.size(), 4u);
    EXPECT_EQ(s.ranks[0].host, "host1");
    EXPECT_EQ(s.ranks[3].host, "host2");
    EXPECT_EQ(s.out_of_bounds, 0) << s.program;
    ASSERT_EQ(s.rows.size(), 3u);
    for (const NcclRow& row : s.rows) {
      EXPECT_EQ(row.out_of_place.wrong, 0) << s.program;
      ExpectConsistentRow(s, row, 4);
    }
  }
  EXPECT_NE(agents[0].Out().find(hosts->Address(2)), std::string::npos) << "rank lines name each host's address\n" << agents[0].Out();
  EXPECT_EQ(Trim(agents[1].Out()), "") << "only rank 0 (node 0) prints the table";
}

}  // namespace
}  // namespace primus::testing
