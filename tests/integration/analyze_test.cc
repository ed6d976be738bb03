// `analyze` through the real binary. AnalyzeTest: argument and input errors,
// a hand-made log directory as JSON, topology of a fixture host drawn with
// Graphviz (milliseconds each). AnalyzeRealFailureTest: logs left by real
// failures of real PyTorch workers under the agent (a SIGKILLed rank, a
// taken port, a missing module, an exception, an unreachable MASTER_ADDR),
// each diagnosed with the right signature and the right first failing rank;
// AnalyzeRunTest: `analyze run` on a real `train` run. Real torch: slow.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus {
namespace {

using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;
using testing::RunProcess;

const std::string kSource = PRIMUS_SOURCE_DIR;

class AnalyzeTest : public ::testing::Test {
 protected:
  ProcessResult Analyze(std::vector<std::string> args) {
    args.insert(args.begin(), "analyze");
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    return RunPrimus(args, options);
  }
  void Write(const std::string& relative, const std::string& text) {
    std::string path = JoinPath(dir_.path(), relative);
    ASSERT_TRUE(MakeDirs(DirName(path)).ok());
    ASSERT_TRUE(WriteFileAtomic(path, text).ok());
  }
  testing::TempDir dir_;
};

TEST_F(AnalyzeTest, UsageErrorsNameTheSubtasksAndFlags) {
  ProcessResult none = Analyze({});
  EXPECT_EQ(none.exit_code, 2) << none.all();
  EXPECT_NE(none.err.find("logs, run, hang or topology"), std::string::npos) << none.err;
  ProcessResult typo = Analyze({"log", "x"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean 'logs'"), std::string::npos) << typo.err;
  ProcessResult misplaced = Analyze({"logs", "x", "--visualize"});
  EXPECT_EQ(misplaced.exit_code, 2);
  EXPECT_NE(misplaced.err.find("--visualize is for analyze topology"), std::string::npos) << misplaced.err;
  ProcessResult missing = Analyze({"logs", "no-such-dir"});
  EXPECT_EQ(missing.exit_code, 4) << missing.all();
  EXPECT_NE(missing.err.find("no-such-dir: no such file or directory"), std::string::npos) << missing.err;
  ProcessResult no_run = Analyze({"run", "."});
  EXPECT_EQ(no_run.exit_code, 4) << no_run.all();
  EXPECT_NE(no_run.err.find("metadata.json"), std::string::npos) << no_run.err;
}

TEST_F(AnalyzeTest, BadSignatureFileIsAConfigurationErrorWithItsLocation) {
  Write("logs/a.log", "x\n");
  Write("sigs.yaml", "signatures:\n  - id: a\n    pattern: '(unclosed'\n    severity: fatal\n    meaning: m\n    fix: f\n");
  ProcessResult result = Analyze({"logs", "logs", "--signatures", "sigs.yaml"});
  EXPECT_EQ(result.exit_code, 3) << result.all();
  EXPECT_NE(result.err.find("sigs.yaml:3:"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("not a valid RE2 expression"), std::string::npos) << result.err;
}

TEST_F(AnalyzeTest, JsonNamesTheFirstFailureAcrossFilesByTime) {
  // Rank 3's out-of-memory comes 2 ms before rank 0's watchdog timeout, in
  // another file read later.
  Write("exp/logs/attempt_0/n1.rank0.log",
        "2026-11-24T10:00:00.500000 E [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9)\n");
  Write("exp/logs/attempt_0/n2.rank3.log",
        "2026-11-24T10:00:00.498000 E torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n");
  ProcessResult result = Analyze({"logs", "exp", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  auto report = nlohmann::json::parse(result.out);
  ASSERT_EQ(report["first_failures"].size(), 1u) << result.out;
  EXPECT_EQ(report["first_failures"][0]["signature"], "gpu-out-of-memory");
  EXPECT_EQ(report["first_failures"][0]["where"]["rank"], 3);
  EXPECT_EQ(report["first_failures"][0]["where"]["host"], "n2");
  EXPECT_EQ(report["first_failures"][0]["where"]["file"], "logs/attempt_0/n2.rank3.log");
  EXPECT_EQ(report["failures"].size(), 2u);
}

TEST_F(AnalyzeTest, TopologyOfAFixtureHostIsDrawnWithGraphviz) {
  std::string fixture = kSource + "/tests/fixtures/hosts/mi300x-8";
  ProcessOptions options;
  options.cwd = dir_.path();
  options.env["PRIMUS_SYSFS_ROOT"] = fixture + "/sys";
  options.env["PRIMUS_PROCFS_ROOT"] = fixture + "/proc";
  options.env["PRIMUS_ETC_ROOT"] = fixture + "/etc";
  ProcessResult result = RunPrimus({"analyze", "topology", "--visualize", "--output", "topo.svg"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("GPU7"), std::string::npos);
  EXPECT_NE(result.out.find("XGMI"), std::string::npos);
  auto dot = ReadFile(JoinPath(dir_.path(), "topo.dot"));
  ASSERT_TRUE(dot.ok());
  EXPECT_NE(dot->find("\"GPU0\" -- \"GPU1\""), std::string::npos);
  auto svg = ReadFile(JoinPath(dir_.path(), "topo.svg"));
  ASSERT_TRUE(svg.ok()) << "dot did not draw: " << result.all();
  EXPECT_NE(svg->find("<svg"), std::string::npos);
  EXPECT_NE(svg->find("GPU3"), std::string::npos);
  // Without Graphviz: exit 4 naming dot, and the graph is still written.
  options.env["PATH"] = "/nonexistent";
  ProcessResult no_dot = RunPrimus({"analyze", "topology", "--visualize", "--output", "bare.svg"}, options);
  EXPECT_EQ(no_dot.exit_code, 4) << no_dot.all();
  EXPECT_NE(no_dot.err.find("Graphviz's dot is not installed"), std::string::npos) << no_dot.err;
  EXPECT_TRUE(PathExists(JoinPath(dir_.path(), "bare.dot")));
  EXPECT_FALSE(PathExists(JoinPath(dir_.path(), "bare.svg")));
}

// ---- logs of real failures ----

class AnalyzeRealFailureTest : public AnalyzeTest {
 protected:
  void SetUp() override {
    if (RunProcess({"/usr/bin/python3", "-c", "import torch.distributed"}).exit_code != 0) {
      GTEST_SKIP() << "/usr/bin/python3 has no torch.distributed";
    }
  }
  // Two workers running analyze_failures.py MODE; returns the job's result.
  ProcessResult RunFailure(const std::string& mode, const std::vector<std::string>& extra_flags = {}) {
    std::vector<std::string> argv = {"direct", "--nproc-per-node", "2", "--log-dir", JoinPath(dir_.path(), "logs")};
    argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
    argv.insert(argv.end(), {"--", "run", "/usr/bin/python3", kSource + "/tests/workers/analyze_failures.py", mode});
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    options.timeout_s = 120;
    return RunPrimus(argv, options);
  }
  // `analyze logs logs --json`: the first failure's signature and rank.
  void ExpectFirstFailure(const std::string& signature, int rank) {
    ProcessResult analysis = Analyze({"logs", "logs", "--json"});
    ASSERT_EQ(analysis.exit_code, 0) << analysis.all();
    auto report = nlohmann::json::parse(analysis.out);
    ASSERT_EQ(report["first_failures"].size(), 1u) << analysis.out;
    const auto& first = report["first_failures"][0];
    EXPECT_EQ(first["signature"], signature) << analysis.out;
    EXPECT_EQ(first["where"]["rank"], rank) << analysis.out;
    ProcessResult text = Analyze({"logs", "logs"});
    EXPECT_NE(text.out.find("First failure in attempt 0: rank " + std::to_string(rank)), std::string::npos) << text.out;
  }
};

TEST_F(AnalyzeRealFailureTest, KilledWorkerIsFirstThoughItsPeerWroteTheErrors) {
  ProcessResult job = RunFailure("killed");
  EXPECT_NE(job.exit_code, 0) << job.all();
  ExpectFirstFailure("killed-sigkill", 1);
}

TEST_F(AnalyzeRealFailureTest, PortAlreadyInUse) {
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  std::string port = std::to_string(ntohs(address.sin_port));
  ProcessResult job = RunFailure("port", {"--env", "STORE_PORT=" + port});
  ::close(holder);
  EXPECT_NE(job.exit_code, 0) << job.all();
  ExpectFirstFailure("port-in-use", 0);
}

TEST_F(AnalyzeRealFailureTest, MissingPythonModule) {
  ProcessResult job = RunFailure("module");
  EXPECT_NE(job.exit_code, 0) << job.all();
  ExpectFirstFailure("module-not-found", 1);
}

TEST_F(AnalyzeRealFailureTest, WorkerRaisingAnException) {
  ProcessResult job = RunFailure("exception");
  EXPECT_NE(job.exit_code, 0) << job.all();
  ExpectFirstFailure("python-exception", 1);
}

TEST_F(AnalyzeRealFailureTest, WrongMasterAddr) {
  // 192.0.2.0/24 is TEST-NET-1: nothing answers there.
  ProcessResult job = RunFailure("master", {"--env", "WRONG_MASTER_ADDR=192.0.2.1"});
  EXPECT_NE(job.exit_code, 0) << job.all();
  ExpectFirstFailure("store-connect-failed", 1);
}

// ---- analyze run on a real train run ----

TEST_F(AnalyzeRealFailureTest, RunSummaryOfARealTrainRunMatchesItsMetrics) {
  ProcessOptions options;
  options.cwd = kSource;  // the experiment names its script relative to the repository
  options.env["HOME"] = dir_.path();
  options.timeout_s = 300;
  // --hang-timeout: as in train_test.cc, a stalled worker fails fast with its stacks.
  ProcessResult train = RunPrimus({"direct", "--hang-timeout", "30", "--", "train", "pretrain", "--config",
                                   kSource + "/examples/gpt/configs/tiny-cpu.yaml", "workspace=" + dir_.path() + "/output"},
                                  options);
  ASSERT_EQ(train.exit_code, 0) << train.all();
  ProcessResult listing = RunProcess({"sh", "-c", "ls -d " + dir_.path() + "/output/tiny-cpu_*"});
  std::string exp = std::string(Trim(listing.out));
  ASSERT_FALSE(exp.empty());
  ProcessResult run = Analyze({"run", exp, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.all();
  auto summary = nlohmann::json::parse(run.out);
  // The metrics file's own first and last lines.
  auto metrics = ReadFile(JoinPath(exp, "metrics.jsonl"));
  ASSERT_TRUE(metrics.ok());
  std::string first_line = metrics->substr(0, metrics->find('\n'));
  std::string trimmed = std::string(Trim(*metrics));
  std::string last_line = trimmed.substr(trimmed.rfind('\n') + 1);
  auto first = nlohmann::json::parse(first_line), last = nlohmann::json::parse(last_line);
  EXPECT_EQ(summary["status"], "succeeded");
  EXPECT_EQ(summary["step_last"], last["step"]);
  EXPECT_DOUBLE_EQ(summary["loss_first"].get<double>(), first["loss"].get<double>());
  EXPECT_DOUBLE_EQ(summary["loss_last"].get<double>(), last["loss"].get<double>());
  EXPECT_GT(summary["steps_per_s"].get<double>(), 1.0);
  EXPECT_GT(summary["tokens_per_s"].get<double>(), 0.0);
  EXPECT_LT(summary["loss_last"].get<double>(), summary["loss_first"].get<double>());
  auto svg = ReadFile(JoinPath(exp, "run.svg"));
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(svg->find(">tokens/s</text>"), std::string::npos);
}

}  // namespace
}  // namespace primus
