// Real PyTorch under the agent (Debian's /usr/bin/python3 with torch 1.13,
// gloo): a DDP step with 2 and 4 workers, @record error files read for the
// banner, and the worker environment compared key by key with torchrun's
// (ours adds the environment plan: profiles and network auto-config).
// Each test imports torch once per worker (~1 s each on 2 cores): label slow.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "run_process.h"
#include "worker_variables.h"
#include "start_process.h"
#include "util/files.h"

namespace primus {
namespace {

using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kTests = std::string(PRIMUS_SOURCE_DIR) + "/tests";
const std::string kPython = "/usr/bin/python3";

class AgentTorchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunProcess({kPython, "-c", "import torch.distributed"}).exit_code != 0) {
      GTEST_SKIP() << kPython << " has no torch.distributed";
    }
  }
  // primus-cli direct [flags] -- run COMMAND, with no user configuration;
  // `base_env` replaces the whole environment when given.
  ProcessResult RunAgent(std::vector<std::string> flags, const std::vector<std::string>& command,
                         const std::map<std::string, std::string>* base_env = nullptr) {
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--log-dir", dir_.path() + "/logs"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "run"});
    argv.insert(argv.end(), command.begin(), command.end());
    ProcessOptions options = Isolated(base_env);
    options.timeout_s = 120;
    return RunProcess(argv, options);
  }
  ProcessOptions Isolated(const std::map<std::string, std::string>* base_env) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    if (base_env != nullptr) {
      options.clear_env = true;
      for (const auto& [key, value] : *base_env) options.env[key] = value;
    } else {
      options.env["HOME"] = dir_.path();
    }
    return options;
  }
  testing::TempDir dir_;
};

TEST_F(AgentTorchTest, DdpStepWithTwoWorkers) {
  ProcessResult result = RunAgent({"--nproc-per-node", "2"}, {kPython, kTests + "/workers/ddp_step.py"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(result.out.find("ddp step ok: rank " + std::to_string(rank) + " of 2"), std::string::npos);
  }
}

TEST_F(AgentTorchTest, DdpStepWithFourWorkers) {
  ProcessResult result = RunAgent({"--nproc-per-node", "4"}, {kPython, kTests + "/workers/ddp_step.py"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(result.out.find("ddp step ok: rank " + std::to_string(rank) + " of 4"), std::string::npos);
  }
}

TEST_F(AgentTorchTest, StaticTwoNodeJobOnOneHost) {
  // Two agents, node ranks 0 and 1, two workers each: world size 4 over gloo.
  const std::string port = "29541";
  std::vector<pid_t> agents;
  for (int node = 0; node < 2; ++node) {
    std::string node_dir = dir_.path() + "/node" + std::to_string(node);
    ASSERT_TRUE(MakeDirs(node_dir).ok());
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--nnodes", "2",
                                     "--node-rank", std::to_string(node), "--master-addr", "127.0.0.1",
                                     "--master-port", port, "--log-dir", node_dir + "/logs",
                                     "--", "run", kPython, kTests + "/workers/ddp_step.py"};
    agents.push_back(testing::StartProcess(argv, node_dir + "/out", node_dir + "/err", Isolated(nullptr)));
  }
  for (int node = 0; node < 2; ++node) {
    EXPECT_EQ(testing::WaitForExit(agents[node], 120), 0) << *ReadFile(dir_.path() + "/node" + std::to_string(node) + "/err");
  }
  std::string out0 = *ReadFile(dir_.path() + "/node0/out"), out1 = *ReadFile(dir_.path() + "/node1/out");
  EXPECT_NE(out0.find("ddp step ok: rank 0 of 4"), std::string::npos) << out0;
  EXPECT_NE(out0.find("ddp step ok: rank 1 of 4"), std::string::npos) << out0;
  EXPECT_NE(out1.find("ddp step ok: rank 2 of 4"), std::string::npos) << out1;
  EXPECT_NE(out1.find("ddp step ok: rank 3 of 4"), std::string::npos) << out1;
}

TEST_F(AgentTorchTest, RecordErrorFileFeedsTheBanner) {
  ProcessResult result = RunAgent({"--nproc-per-node", "2"}, {kPython, kTests + "/workers/record_failure.py"});
  EXPECT_EQ(result.exit_code, 1);
  std::string log = result.err;
  EXPECT_NE(log.find("Root cause: rank 1 (local rank 1)"), std::string::npos) << log;
  EXPECT_NE(log.find("(from its error file)"), std::string::npos) << log;
  EXPECT_NE(log.find("message:    ValueError: rank one is broken"), std::string::npos) << log;
  EXPECT_NE(log.find("in main"), std::string::npos) << log;  // the recorded traceback
}

// The environments workers/dump_env.py wrote: rank -> variables.
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
  // Both launchers start from the same minimal environment.
  const std::map<std::string, std::string> base = {{"PATH", "/usr/bin:/bin"}, {"HOME", dir_.path()}, {"LANG", "C.UTF-8"}};
  std::string torchrun_out = dir_.path() + "/torchrun", agent_out = dir_.path() + "/agent";
  ASSERT_TRUE(MakeDirs(torchrun_out).ok() && MakeDirs(agent_out).ok());
  const std::string port = "29533";

  // torchrun's static rendezvous: the same addresses, port and run id as ours.
  std::vector<std::string> torchrun = {kPython, kTests + "/tools/torchrun_compat.py", "--nnodes", "1",
                                       "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                                       "--master_port", port, "--rdzv_id", "compare", "--monitor_interval",
                                       "0.1", kTests + "/workers/dump_env.py", torchrun_out};
  ProcessOptions options = Isolated(&base);
  options.timeout_s = 120;
  ProcessResult torchrun_result = RunProcess(torchrun, options);
  ASSERT_EQ(torchrun_result.exit_code, 0) << torchrun_result.err;
  ProcessResult agent_result =
      RunAgent({"--nproc-per-node", "2", "--master-port", port}, {kPython, kTests + "/workers/dump_env.py", agent_out},
               &base);
  ASSERT_EQ(agent_result.exit_code, 0) << agent_result.err;

  auto theirs = Environments(torchrun_out);
  auto ours = Environments(agent_out);
  ASSERT_EQ(theirs.size(), 2u);
  ASSERT_EQ(ours.size(), 2u);

  // The documented differences (docs/agent.md, "Worker environment").
  const std::set<std::string> only_torchrun = {"NCCL_ASYNC_ERROR_HANDLING"};  // torch < 2.2 name
  std::set<std::string> only_ours = testing::VariablesOnlyOurs();
  only_ours.insert("PYTHONPATH");  // the stack dumper's directory
  // And the environment plan of this host (profiles, network auto-config),
  // which `info --json` shows for the same environment.
  ProcessResult info = RunProcess({PRIMUS_BINARY, "info", "--json"}, Isolated(&base));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  nlohmann::json planned = nlohmann::json::parse(info.out)["env"];
  ASSERT_FALSE(planned.empty());
  for (const auto& [key, entry] : planned.items()) {
    only_ours.insert(key);
    for (int rank = 0; rank < 2; ++rank) EXPECT_EQ(ours[rank][key], entry["value"]) << key;
  }
  const std::set<std::string> different_values = {
      "TORCHELASTIC_ERROR_FILE",       // our log layout
      "TORCHELASTIC_RUN_ID",           // ours: generated per launch; torchrun static: --rdzv_id
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
    EXPECT_EQ(theirs[rank]["TORCHELASTIC_RUN_ID"], "compare");
    EXPECT_FALSE(ours[rank]["TORCHELASTIC_RUN_ID"].empty());
  }
}

}  // namespace
}  // namespace primus
