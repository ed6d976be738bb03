// direct.exclude_bad_nodes on a real Slurm cluster (tests/support/
// slurm_cluster.h, three slurmd, each in a network namespace with its own
// host name): a 2-node gloo job inside a 3-node allocation (salloc), where
// the rank on node2 stops outside the all_reduce. Node 0 names it as the
// hang's culprit, node2's agent leaves the job (exit code 5), and
// `slurm srun` starts the job again with --exclude=node2, on node1 and the
// spare node3, where it finishes. A batch job of 2 nodes has no spare in
// its allocation: it goes on as a new batch job without node2, which
// `sbatch --wait` follows to its end. Tens of seconds each: label slow. (The
// ssh mode's spare host is tested in ssh_test.cc, SshTrainTest.)
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>

#include "processes.h"
#include "run_process.h"
#include "slurm_cluster.h"
#include "text.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus {
namespace {

using testing::ProcessOptions;
using testing::ProcessResult;
using testing::SlurmCluster;
using Clock = std::chrono::steady_clock;

const std::string kPython = "/usr/bin/python3";
const std::string kSource = PRIMUS_SOURCE_DIR;

class BadNodeSlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unavailable_ = SlurmCluster::Unavailable();
    if (!unavailable_.empty()) return;
    testing::SlurmClusterOptions options;
    options.nodes = 3;
    cluster_ = SlurmCluster::Start(options, &start_error_).release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    if (!unavailable_.empty()) GTEST_SKIP() << "no local Slurm cluster: " << unavailable_;
    ASSERT_NE(cluster_, nullptr) << "the Slurm cluster did not start: " << start_error_;
    marker_ = "bad-node-test-" + std::to_string(getpid());
  }
  void TearDown() override {
    for (pid_t pid : testing::ProcessesWithMarker(marker_)) kill(pid, SIGKILL);
  }
  ProcessOptions UserOptions(double timeout_s) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env = cluster_->Environment();
    options.env["HOME"] = dir_.path();
    options.env["PRIMUS_TEST_MARKER"] = marker_;
    options.env["PRIMUS_DIRECT_LOG_DIR"] = dir_.path() + "/agent-logs";
    options.timeout_s = timeout_s;
    return options;
  }

  static inline SlurmCluster* cluster_ = nullptr;
  static inline std::string unavailable_;
  static inline std::string start_error_;
  testing::TempDir dir_;
  std::string marker_;
};

TEST_F(BadNodeSlurmTest, TheHangsCulpritIsExcludedAndASpareNodeTakesItsPlace) {
  auto started = Clock::now();
  ProcessResult result = testing::RunProcess(
      {"salloc", "-N", "3", PRIMUS_BINARY, "--set", "direct.exclude_bad_nodes=true", "--set",
       "direct.max_restarts=1", "slurm", "srun", "-N", "2", "--", "direct", "--hang-timeout", "15", "--term-timeout",
       "2", "--", "run", kPython, kSource + "/tests/workers/hang_on_host.py", "node2"},
      UserOptions(240));
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  ASSERT_EQ(result.exit_code, 0) << result.all();
  // The first run: node2's rank stalls, node 0 names it and leaves node2 out.
  EXPECT_NE(result.out.find("on node2: stalling at step 2"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("excluding node 1 (node2) from the job (the hang's culprit: rank 1 is not in the "
                            "all_reduce"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("this node (node2) is excluded from the job"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("node2 left the job as a bad node; starting it again without node2"), std::string::npos)
      << result.err;
  // The second, on node1 and the spare node3, finishes.
  EXPECT_NE(result.out.find("on node3: done, world 2"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("on node1: done, world 2"), std::string::npos) << result.out;
  // Recorded beside node 0's logs, and in node2's endings log.
  bool listed = false, noted = false;
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path() + "/agent-logs", error)) {
    std::string name = entry.path().filename().string();
    if (name == "failing_nodes.txt") listed = listed || testing::Slurp(entry.path().string()) == "node2\n";
    if (name == "node2.endings.log") {
      noted = noted || testing::Slurp(entry.path().string()).find("E node node2: excluded from the job: the "
                                                                           "hang's culprit") != std::string::npos;
    }
  }
  EXPECT_TRUE(listed) << "failing_nodes.txt names node2";
  EXPECT_TRUE(noted) << "node2's endings log says why it left";
  std::cerr << "[bad node excluded and replaced: " << seconds << " s]\n";
}

TEST_F(BadNodeSlurmTest, ABatchJobWithoutASpareGoesOnAsANewJobWithoutTheBadNode) {
  auto started = Clock::now();
  // Slurm gives a 2-node job on 3 idle nodes node1 and node2; --nodelist
  // makes sure, and the continuation drops node2 from it.
  ProcessResult result = testing::RunProcess(
      {PRIMUS_BINARY, "--set", "direct.exclude_bad_nodes=true", "--set", "direct.max_restarts=1", "slurm", "sbatch",
       "-N", "2", "--nodelist=node[1-2]", "--wait", "--", "direct", "--hang-timeout", "15", "--term-timeout", "2", "--",
       "run", kPython, kSource + "/tests/workers/hang_on_host.py", "node2"},
      UserOptions(300));
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(result.out, match, std::regex("submitted batch job ([0-9]+)"))) << result.out;
  std::string first = match[1].str();
  std::string job_dir = dir_.path() + "/output/run_" + first;
  // The first job: node2's rank stalls, node2 leaves, no node is left to take its place.
  EXPECT_NE(result.out.find("on node2: stalling at step 2"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("node2 left the job as a bad node, and 1 node remains for a job of 2: the job goes on "
                            "elsewhere without node2 (restart 1 of 1)"),
            std::string::npos)
      << result.all();
  // The continuation: submitted by the first, followed by --wait, run on node1 and node3.
  Result<std::string> continuations = ReadFile(job_dir + "/continuations.txt");
  ASSERT_TRUE(continuations.ok()) << result.all();
  ASSERT_TRUE(std::regex_search(*continuations, match, std::regex("^" + first + " -> ([0-9]+) without node2\n")))
      << *continuations;
  std::string next = match[1].str();
  EXPECT_NE(result.err.find("job " + first + " goes on as job " + next + ": following it"), std::string::npos)
      << result.err;
  EXPECT_NE(result.out.find("on node3: done, world 2"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("on node1: done, world 2"), std::string::npos) << result.out;
  // Its script and log are in the first job's directory; the script leaves node2 out.
  Result<std::string> script = ReadFile(job_dir + "/sbatch-" + next + ".sh");
  ASSERT_TRUE(script.ok());
  EXPECT_NE(script->find("#SBATCH --nodelist=node1\n"), std::string::npos) << *script;
  EXPECT_NE(script->find("#SBATCH --exclude=node2\n"), std::string::npos) << *script;
  EXPECT_TRUE(PathExists(job_dir + "/logs/slurm-" + next + ".out"));
  EXPECT_NE(testing::ReadOrEmpty(job_dir + "/logs/slurm-" + next + ".out").find("restart 1/1: starting"), std::string::npos)
      << "its restart is counted: " << testing::ReadOrEmpty(job_dir + "/logs/slurm-" + next + ".out");
  // Slurm's account: the first ended with 5 (a node left out), the second with 0.
  ProcessResult shown = cluster_->Client({"scontrol", "show", "job", first});
  EXPECT_NE(shown.out.find("ExitCode=5:0"), std::string::npos) << shown.all();
  std::cerr << "[batch job went on without the bad node: " << seconds << " s]\n";
}

}  // namespace
}  // namespace primus
