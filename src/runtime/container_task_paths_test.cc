#include "runtime/container_task_paths.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

class TaskPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/base.yaml", "backend: command\ncommand: {argv: [/bin/true]}\n").ok());
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/exp.yaml", "extends: base.yaml\nexp_name: e\nworkspace: /data/runs\n").ok());
  }
  ScopedTempDir dir_{"task-paths"};
};

TEST_F(TaskPathsTest, TrainReadsItsExperimentFilesAndWritesItsWorkspace) {
  std::string exp = dir_.path() + "/exp.yaml";
  TaskPaths paths = FindTaskPaths("train", {"pretrain", "--config", exp}, {});
  EXPECT_EQ(paths.read, (std::vector<std::string>{dir_.path() + "/base.yaml", exp})) << "the extends chain too";
  EXPECT_EQ(paths.written, (std::vector<std::string>{"/data/runs"}));
}

TEST_F(TaskPathsTest, OverridesResumeAndTheExpVariable) {
  std::string exp = dir_.path() + "/exp.yaml";
  TaskPaths paths = FindTaskPaths("train", {"pretrain", "workspace=/scratch/w", "--resume", "/ckpt/step100"},
                                  {{"EXP", exp}});
  EXPECT_EQ(paths.written, (std::vector<std::string>{"/scratch/w"}));
  EXPECT_EQ(paths.read.front(), "/ckpt/step100");
}

TEST_F(TaskPathsTest, NothingForOtherTasksOrAnUnreadableExperiment) {
  EXPECT_TRUE(FindTaskPaths("run", {"/bin/true", "--config", dir_.path() + "/exp.yaml"}, {}).read.empty());
  TaskPaths missing = FindTaskPaths("train", {"pretrain", "--config", dir_.path() + "/none.yaml"}, {});
  EXPECT_TRUE(missing.read.empty());
  EXPECT_TRUE(missing.written.empty());
}

}  // namespace
}  // namespace primus::runtime
