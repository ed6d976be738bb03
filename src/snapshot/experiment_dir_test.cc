#include "snapshot/experiment_dir.h"

#include <gtest/gtest.h>

#include "util/scoped_temp_dir.h"
#include <stdlib.h>

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
}  // namespace primus::snapshot
