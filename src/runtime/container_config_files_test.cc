#include "runtime/container_config_files.h"

#include <gtest/gtest.h>

#include "config/launcher_config.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

TEST(ContainerConfigFilesTest, FindsTheFilesThatSuppliedValues) {
  ScopedTempDir dir("config-files");
  std::string system = dir.path() + "/etc.yaml", user = dir.path() + "/user.yaml", project = dir.path() + "/project.yaml",
              chosen = dir.path() + "/chosen.yaml", unused = dir.path() + "/unused.yaml";
  ASSERT_TRUE(WriteFileAtomic(system, "direct:\n  join_timeout: 60\n").ok());
  ASSERT_TRUE(WriteFileAtomic(user, "container:\n  image: mine\n").ok());
  ASSERT_TRUE(WriteFileAtomic(project, "direct:\n  max_restarts: 1\n").ok());
  ASSERT_TRUE(WriteFileAtomic(chosen, "direct:\n  max_restarts: 2\n").ok());
  config::LauncherSources sources;
  sources.system_file = system;
  sources.user_file = user;
  sources.project_file = project;
  sources.explicit_file = chosen;
  auto launcher = config::LoadLauncherConfig(sources);
  ASSERT_TRUE(launcher.ok()) << launcher.error().Format();

  ConfigFilesInUse found = FindConfigFilesInUse(launcher->effective(), ConfigFileLayers{system, user, project});
  EXPECT_EQ(found.files, (std::vector<std::string>{system, chosen, user})) << "project's only value is overridden";
  EXPECT_EQ(found.explicit_file, chosen);
  EXPECT_TRUE(found.user_file);
}

TEST(ContainerConfigFilesTest, DefaultsAndFlagsNeedNoFile) {
  auto launcher = config::LoadLauncherConfig({});
  ASSERT_TRUE(launcher.ok());
  ConfigFilesInUse found = FindConfigFilesInUse(launcher->effective(), DefaultConfigFileLayers({}));
  EXPECT_TRUE(found.files.empty());
  EXPECT_EQ(found.explicit_file, "");
  EXPECT_EQ(DefaultConfigFileLayers({{"XDG_CONFIG_HOME", "/cfg"}}).user_file, "/cfg/primus/config.yaml");
}

}  // namespace
}  // namespace primus::runtime
