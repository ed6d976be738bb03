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

TEST(ReplayTest, OtherCodeOrAnotherLayoutIsIncompatible) {
  snapshot::RunMetadata then;
  then.git = snapshot::GitState{};
  then.git->commit = std::string(40, 'a');
  then.git->dirty = true;
  then.git->diff_sha256 = std::string(64, 'd');
  then.layout = snapshot::RunLayout{2, 8, 16};
  snapshot::GitState same = *then.git;
  EXPECT_TRUE(CompareLaunch(then, same, {2, 8, 16}).empty());
  snapshot::GitState committed = same;
  committed.commit = std::string(40, 'b');
  committed.dirty = false;
  committed.diff_sha256.clear();
  auto differences = CompareLaunch(then, committed, {1, 8, 8});
  std::vector<std::string> what;
  for (const SystemDifference& d : differences) {
    EXPECT_TRUE(d.incompatible) << d.what;
    what.push_back(d.what);
  }
  EXPECT_EQ(what, (std::vector<std::string>{"code: commit", "code: uncommitted", "layout: nodes", "layout: world size"}));
  EXPECT_EQ(differences[0].then, std::string(12, 'a'));
  EXPECT_EQ(differences[1].now, "none");
  EXPECT_EQ(CompareLaunch(then, std::nullopt, {2, 8, 16}).at(0).now, "- (not in a git repository)");
  // A snapshot that recorded neither compares on neither.
  EXPECT_TRUE(CompareLaunch(snapshot::RunMetadata{}, committed, {1, 1, 1}).empty());
}

}  // namespace
}  // namespace primus::train
