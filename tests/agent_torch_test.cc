// Real PyTorch under the agent (Debian's /usr/bin/python3 with torch 1.13,
// gloo): a DDP step with 2 and 4 workers, @record error files read for the
// banner, and the worker environment compared key by key with torchrun's.
// Each test imports torch once per worker (~1 s each on 2 cores): label slow.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "process_runner.h"
#include "util/files.h"

namespace primus {
namespace {

using testing::StartProcess;
using testing::WaitProcess;

const std::string kDriver = std::string(PRIMUS_BINARY_DIR) + "/primus-agent-driver";
const std::string kTests = std::string(PRIMUS_SOURCE_DIR) + "/tests";
const std::string kPython = "/usr/bin/python3";

class AgentTorchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pid_t probe = StartProcess({kPython, "-c", "import torch.distributed"}, "/dev/null", "/dev/null");
    if (WaitProcess(probe, 60) != 0) GTEST_SKIP() << kPython << " has no torch.distributed";
    char pattern[] = "/tmp/primus-agent-torch-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  int RunAgent(std::vector<std::string> flags, const std::vector<std::string>& command,
               const std::vector<std::string>* env = nullptr) {
    std::vector<std::string> argv = {kDriver, "--log-dir", dir_ + "/logs"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return WaitProcess(StartProcess(argv, dir_ + "/stdout", dir_ + "/stderr", env), 120);
  }
  std::string Read(const std::string& name) {
    auto text = ReadFile(dir_ + "/" + name);
    return text.ok() ? *text : "";
  }
  std::string dir_;
};

TEST_F(AgentTorchTest, DdpStepWithTwoWorkers) {
  ASSERT_EQ(RunAgent({"--nproc-per-node", "2"}, {kPython, kTests + "/agent_ddp_worker.py"}), 0) << Read("stderr");
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(Read("stdout").find("ddp step ok: rank " + std::to_string(rank) + " of 2"), std::string::npos);
  }
}

TEST_F(AgentTorchTest, DdpStepWithFourWorkers) {
  ASSERT_EQ(RunAgent({"--nproc-per-node", "4"}, {kPython, kTests + "/agent_ddp_worker.py"}), 0) << Read("stderr");
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(Read("stdout").find("ddp step ok: rank " + std::to_string(rank) + " of 4"), std::string::npos);
  }
}

TEST_F(AgentTorchTest, RecordErrorFileFeedsTheBanner) {
  EXPECT_EQ(RunAgent({"--nproc-per-node", "2"}, {kPython, kTests + "/agent_record_worker.py"}), 1);
  std::string log = Read("stderr");
  EXPECT_NE(log.find("Root cause: rank 1 (local rank 1)"), std::string::npos) << log;
  EXPECT_NE(log.find("(from its error file)"), std::string::npos) << log;
  EXPECT_NE(log.find("message:    ValueError: rank one is broken"), std::string::npos) << log;
  EXPECT_NE(log.find("in main"), std::string::npos) << log;  // the recorded traceback
}

// Launches agent_dump_env.py under `launcher` with a minimal environment and
// returns rank -> environment.
std::map<int, std::map<std::string, std::string>> Environments(const std::string& out_dir) {
  std::map<int, std::map<std::string, std::string>> result;
  for (int rank = 0; rank < 2; ++rank) {
    auto text = ReadFile(out_dir + "/env." + std::to_string(rank) + ".json");
    if (!text.ok()) continue;
    result[rank] = nlohmann::json::parse(*text).get<std::map<std::string, std::string>>();
  }
  return result;
}

TEST_F(AgentTorchTest, WorkerEnvironmentMatchesTorchrunKeyByKey) {
  const std::vector<std::string> base = {"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"};
  std::map<std::string, std::string> base_map = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/root"}, {"LANG", "C.UTF-8"}};
  std::string torchrun_out = dir_ + "/torchrun", agent_out = dir_ + "/agent";
  ASSERT_TRUE(MakeDirs(torchrun_out).ok() && MakeDirs(agent_out).ok());
  const std::string port = "29533";

  // torchrun's static rendezvous: the same addresses, port and run id as ours.
  std::vector<std::string> torchrun = {kPython, kTests + "/tools/torchrun_compat.py", "--nnodes", "1",
                                       "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                                       "--master_port", port, "--rdzv_id", "compare", "--monitor_interval",
                                       "0.1", kTests + "/agent_dump_env.py", torchrun_out};
  ASSERT_EQ(WaitProcess(StartProcess(torchrun, dir_ + "/torchrun.out", dir_ + "/torchrun.err", &base), 120), 0)
      << Read("torchrun.err");
  ASSERT_EQ(RunAgent({"--nproc-per-node", "2", "--master-port", port, "--run-id", "compare"},
                     {kPython, kTests + "/agent_dump_env.py", agent_out}, &base),
            0)
      << Read("stderr");

  auto theirs = Environments(torchrun_out);
  auto ours = Environments(agent_out);
  ASSERT_EQ(theirs.size(), 2u);
  ASSERT_EQ(ours.size(), 2u);

  // The documented differences (docs/agent.md, "Worker environment").
  const std::set<std::string> only_torchrun = {"NCCL_ASYNC_ERROR_HANDLING"};  // torch < 2.2 name
  const std::set<std::string> only_ours = {"NODE_RANK",         "NNODES",           "PRIMUS_HEARTBEAT_FILE",
                                           "PRIMUS_LAUNCH_TOKEN", "PYTHONUNBUFFERED", "TORCH_NCCL_ASYNC_ERROR_HANDLING"};
  const std::set<std::string> different_values = {
      "TORCHELASTIC_ERROR_FILE",       // our log layout
      "TORCHELASTIC_USE_AGENT_STORE",  // static torchrun hosts the store in its agent; rank 0 hosts ours
      "OMP_NUM_THREADS",               // torchrun: 1; ours: max(1, cpus / nproc)
  };
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::set<std::string> keys;
    for (const auto& [key, value] : theirs[rank]) keys.insert(key);
    for (const auto& [key, value] : ours[rank]) keys.insert(key);
    for (const std::string& key : keys) {
      bool in_theirs = theirs[rank].count(key) > 0, in_ours = ours[rank].count(key) > 0;
      if (in_theirs && !in_ours) {
        EXPECT_TRUE(only_torchrun.count(key)) << key << " is set by torchrun only: " << theirs[rank][key];
      } else if (!in_theirs && in_ours) {
        EXPECT_TRUE(only_ours.count(key)) << key << " is set by the agent only: " << ours[rank][key];
      } else if (theirs[rank][key] != ours[rank][key] && !different_values.count(key)) {
        ADD_FAILURE() << key << ": torchrun " << theirs[rank][key] << ", agent " << ours[rank][key];
      }
    }
    EXPECT_EQ(theirs[rank]["TORCHELASTIC_USE_AGENT_STORE"], "True");
    EXPECT_EQ(ours[rank]["TORCHELASTIC_USE_AGENT_STORE"], "False");
    EXPECT_EQ(ours[rank]["RANK"], std::to_string(rank));
    EXPECT_EQ(ours[rank]["TORCHELASTIC_RUN_ID"], "compare");
  }
}

}  // namespace
}  // namespace primus
