#include "snapshot/experiment_dir.h"

#include <gtest/gtest.h>

#include "util/scoped_temp_dir.h"
#include <stdlib.h>

#include <filesystem>

#include "util/files.h"

namespace primus::snapshot {
namespace {

TEST(ExperimentDirTest, NamedByExperimentAndTimeWithSubdirectories) {
  ScopedTempDir scoped("exp");
  std::string workspace = scoped.path() + "/output";
  std::time_t when = 1762782322;  // 2025-11-10 13:45:22 UTC
  auto dir = CreateExperimentDir(workspace, "deepseek v2", when);
  ASSERT_TRUE(dir.ok()) << dir.error().Format();
  EXPECT_NE(dir->root.find("/output/deepseek_v2_2025"), std::string::npos) << dir->root;
  EXPECT_TRUE(IsDirectory(dir->env_dir()));
  EXPECT_TRUE(IsDirectory(dir->config_dir()));
  EXPECT_TRUE(IsDirectory(dir->logs_dir()));
}

TEST(ExperimentDirTest, NeverReusesAnExistingDirectory) {
  ScopedTempDir scoped("exp");
  std::string workspace = scoped.path();
  auto first = CreateExperimentDir(workspace, "exp", 1762782322);
  auto second = CreateExperimentDir(workspace, "exp", 1762782322);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->root, second->root);
  EXPECT_EQ(second->root, first->root + "_2");
}

TEST(ExperimentDirTest, UnwritableWorkspaceIsAnError) {
  auto dir = CreateExperimentDir("/proc/primus-cannot-write-here", "exp", 0);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("/proc/primus-cannot-write-here"), std::string::npos);
}

}  // namespace
TEST(ExperimentDirTest, NodesOfOneJobShareOneDirectoryWithoutOverwritingEachOther) {
  ScopedTempDir temp;
  std::string workspace = temp.path() + "/ws";
  // Node 1 may get there first.
  auto node1 = OpenJobExperimentDir(workspace, "gpt 7b", "job/42", 1);
  auto node0 = OpenJobExperimentDir(workspace, "gpt 7b", "job/42", 0);
  auto again = OpenJobExperimentDir(workspace, "gpt 7b", "job/42", 0);
  ASSERT_TRUE(node0.ok() && node1.ok() && again.ok());
  EXPECT_EQ(node0->shared_root, workspace + "/gpt_7b_job_42");
  EXPECT_EQ(node1->shared_root, node0->shared_root);
  EXPECT_EQ(node0->node.root, node0->shared_root);
  EXPECT_EQ(node1->node.root, node0->shared_root + "/nodes/node1");
  EXPECT_NE(node0->node.metadata_file(), node1->node.metadata_file());
  for (const auto* job : {&*node0, &*node1}) {
    EXPECT_TRUE(std::filesystem::is_directory(job->node.logs_dir()));
    EXPECT_TRUE(std::filesystem::is_directory(job->node.env_dir()));
  }
}

}  // namespace primus::snapshot
