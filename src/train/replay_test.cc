#include "train/replay.h"

#include <gtest/gtest.h>

namespace primus::train {
namespace {

TEST(ReplayTest, GpuChangesAreIncompatibleVersionsAreWarnings) {
  nlohmann::json then = {{"gpu_vendor", "amd"}, {"gpu_model", "MI300X"}, {"gpu_count", 8}, {"torch", "2.4.0"}, {"host", "a"}};
  nlohmann::json same = then;
  same["host"] = "b";
  same["torch"] = "2.5.0";
  auto soft = CompareSystems(then, same);
  ASSERT_EQ(soft.size(), 2u);
  EXPECT_FALSE(soft[0].incompatible);
  nlohmann::json other = then;
  other["gpu_model"] = "MI355X";
  other["gpu_count"] = 4;
  auto hard = CompareSystems(then, other);
  ASSERT_EQ(hard.size(), 2u);
  EXPECT_TRUE(hard[0].incompatible && hard[1].incompatible);
  std::string table = FormatDifferences(hard);
  EXPECT_NE(table.find("MI300X"), std::string::npos);
  EXPECT_NE(table.find("INCOMPATIBLE"), std::string::npos);
}

TEST(ReplayTest, ADifferentPrimusIsListed) {
  nlohmann::json then = {{"gpu_model", "MI300X"}, {"primus_backend", "26.5, git fd1eeabbad15 at /workspace/Primus"}};
  nlohmann::json now = then;
  now["primus_backend"] = "26.6, git 0123456789ab at /workspace/Primus";
  auto differences = CompareSystems(then, now);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].what, "Primus");
  EXPECT_FALSE(differences[0].incompatible);
  EXPECT_NE(FormatDifferences(differences).find("26.6, git 0123456789ab"), std::string::npos);
}

TEST(ReplayTest, RestoresTrainingVariablesNotSessionOrAgentOnes) {
  for (const char* name : {"NCCL_DEBUG", "HSA_NO_SCRATCH_RECLAIM", "OMP_NUM_THREADS", "MY_SETTING"}) {
    EXPECT_TRUE(IsReplayedVariable(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "SSH_AUTH_SOCK", "RANK", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"}) {
    EXPECT_FALSE(IsReplayedVariable(name)) << name;
  }
}

TEST(ReplayTest, NotAnExperimentDirectory) {
  auto missing = LoadReplaySource("/nonexistent/exp");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);
  auto plain = LoadReplaySource("/tmp");
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message.find("not a primus-cli experiment directory"), std::string::npos);
}

}  // namespace
}  // namespace primus::train
