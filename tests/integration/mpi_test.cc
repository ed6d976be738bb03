// The MPI scheduler layer through a real Open MPI mpirun (Debian's
// openmpi-bin): `mpirun -np 2 primus-cli direct -- run ...` is one job of two
// nodes whose agents find each other from Open MPI's variables (the node
// rank, the node count, node 0's address from mpirun's contact URI), as the
// GPT plan and the VCCL guide launch. Both ranks run on this host here (each
// agent a node on loopback); the plan warns about that.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "free_port.h"
#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus {
namespace {

using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunProcess;

class MpiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!IsExecutableFile("/usr/bin/mpirun")) GTEST_SKIP() << "no /usr/bin/mpirun (Debian's openmpi-bin)";
  }
  ProcessOptions Options() const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.timeout_s = 120;
    options.env["HOME"] = dir_.path();
    options.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";  // CI runs as root; Open MPI refuses without both
    options.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
    options.env["OMPI_MCA_rmaps_base_oversubscribe"] = "1";
    options.env["PRIMUS_JOB_TOKEN"] = "0123456789abcdef0123456789abcdef";
    for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "SLURM_JOB_ID"}) {
      options.env[name] = std::nullopt;
    }
    return options;
  }
  testing::TempDir dir_;
};

TEST_F(MpiTest, MpirunStartsOneAgentPerRankAsOneJob) {
  std::string port = std::to_string(testing::FreePortPair());
  ProcessResult result = RunProcess(
      {"/usr/bin/mpirun", "-np", "2", "-x", "PRIMUS_JOB_TOKEN", "-x", "MASTER_PORT=" + port, PRIMUS_BINARY, "direct",
       "--nproc-per-node", "2", "--", "run", "/bin/sh", "-c",
       "echo worker $RANK of $WORLD_SIZE on node $GROUP_RANK of $GROUP_WORLD_SIZE via $MASTER_ADDR"},
      Options());
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::set<std::string> lines;
  std::set<std::string> masters;
  for (const std::string& line : Split(result.out, '\n')) {
    size_t at = line.find("worker ");
    if (at == std::string::npos) continue;
    std::string text = line.substr(at);
    lines.insert(text.substr(0, text.find(" via ")));
    masters.insert(text.substr(text.find(" via ") + 5));
  }
  EXPECT_EQ(lines, (std::set<std::string>{"worker 0 of 4 on node 0 of 2", "worker 1 of 4 on node 0 of 2",
                                          "worker 2 of 4 on node 1 of 2", "worker 3 of 4 on node 1 of 2"}))
      << result.all();
  EXPECT_EQ(masters.size(), 1u) << "one node 0 for everyone: " << result.all();
  EXPECT_NE(result.err.find("openmpi started 2 primus-cli on this host"), std::string::npos) << result.err;

  // The plan says where each setting came from.
  ProcessResult plan = RunProcess({"/usr/bin/mpirun", "-np", "2", "-x", "PRIMUS_JOB_TOKEN", PRIMUS_BINARY,
                                   "--dry-run", "direct", "--", "run", "true"},
                                  Options());
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("openmpi OMPI_COMM_WORLD_SIZE"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("openmpi OMPI_MCA_orte_hnp_uri"), std::string::npos) << plan.out;
}

// JAX's and TensorFlow's variables in every worker of a 2-node job (JAX and
// TensorFlow are not packaged in Debian: a python worker reads them as
// jax.distributed.initialize() and MultiWorkerMirroredStrategy do).
TEST_F(MpiTest, FrameworkEnvGivesEveryWorkerJaxAndTfConfig) {
  std::string port = std::to_string(testing::FreePortPair());
  std::string script =
      "import json, os\n"
      "tf = json.loads(os.environ['TF_CONFIG'])\n"
      "print('env', os.environ['RANK'], os.environ['JAX_COORDINATOR_ADDRESS'], os.environ['JAX_NUM_PROCESSES'],\n"
      "      os.environ['JAX_PROCESS_ID'], os.environ['JAX_PROCESS_INDEX'], tf['task']['type'], tf['task']['index'],\n"
      "      ','.join(tf['cluster']['worker']))\n";
  ProcessResult result = RunProcess(
      {"/usr/bin/mpirun", "-np", "2", "-x", "PRIMUS_JOB_TOKEN", "-x", "MASTER_PORT=" + port, "-x", "MASTER_ADDR=127.0.0.1",
       PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--framework-env", "jax,tensorflow", "--", "run",
       "/usr/bin/python3", "-c", script},
      Options());
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::map<std::string, std::vector<std::string>> by_rank;
  for (const std::string& line : Split(result.out, '\n')) {
    size_t at = line.find("env ");
    if (at == std::string::npos) continue;
    std::vector<std::string> words = Split(line.substr(at + 4), ' ');
    ASSERT_EQ(words.size(), 8u) << line;
    by_rank[words[0]] = words;
  }
  ASSERT_EQ(by_rank.size(), 4u) << result.all();
  int p = std::stoi(port);
  std::string cluster = "127.0.0.1:" + std::to_string(p + 2) + ",127.0.0.1:" + std::to_string(p + 3) + ",127.0.0.1:" +
                        std::to_string(p + 2) + ",127.0.0.1:" + std::to_string(p + 3);
  for (const auto& [rank, words] : by_rank) {
    EXPECT_EQ(words[1], "127.0.0.1:" + port) << "one coordinator: node 0's MASTER_ADDR:MASTER_PORT";
    EXPECT_EQ(words[2], "4");
    EXPECT_EQ(words[3], rank);
    EXPECT_EQ(words[4], rank);
    EXPECT_EQ(words[5], "worker");
    EXPECT_EQ(words[6], rank) << "TF_CONFIG's task index is the rank";
    EXPECT_EQ(words[7], cluster) << "every worker of both nodes, node by node";
  }
}

// A failing worker on node 1 ends the whole job with its code, through mpirun.
TEST_F(MpiTest, AWorkerFailureOnOneNodeEndsTheJob) {
  std::string port = std::to_string(testing::FreePortPair());
  auto start = std::chrono::steady_clock::now();
  ProcessResult result = RunProcess(
      {"/usr/bin/mpirun", "-np", "2", "-x", "PRIMUS_JOB_TOKEN", "-x", "MASTER_PORT=" + port, PRIMUS_BINARY, "direct",
       "--", "run", "/bin/sh", "-c", "if [ $GROUP_RANK = 1 ]; then exit 7; fi; sleep 60"},
      Options());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(result.exit_code, 0) << result.all();
  EXPECT_LT(seconds, 50) << "node 0's worker was stopped, not waited for: " << result.all();
  EXPECT_NE(result.all().find("exit code 7"), std::string::npos) << result.all();
}

}  // namespace
}  // namespace primus
