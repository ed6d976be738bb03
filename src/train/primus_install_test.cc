#include "train/primus_install.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>

#include "util/files.h"

namespace primus::train {
namespace {

namespace test {
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/primus-install-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};
}  // namespace test

// A directory that looks like a Primus checkout: primus/cli/main.py, primus/configs/.
std::string MakeCheckout(const std::string& root, const std::string& version = "26.5") {
  EXPECT_TRUE(MakeDirs(root + "/primus/configs/models").ok());
  EXPECT_TRUE(MakeDirs(root + "/primus/cli/subcommands").ok());
  EXPECT_TRUE(WriteFileAtomic(root + "/primus/cli/main.py", "print('primus')\n").ok());
  EXPECT_TRUE(WriteFileAtomic(root + "/primus/__init__.py", "# Primus\n__version__ = \"" + version + "\"\n").ok());
  for (const char* name : {"train.py", "projection.py", "_helpers.py", "__init__.py"}) {
    EXPECT_TRUE(WriteFileAtomic(root + "/primus/cli/subcommands/" + name, "\n").ok());
  }
  return root;
}

TEST(PrimusInstallTest, PrimusPathWinsAndNamesItsVersion) {
  test::TempDir dir;
  std::string set = MakeCheckout(dir.path() + "/set", "26.4");
  std::string usual = MakeCheckout(dir.path() + "/usual");
  PrimusSearch search = FindPrimus(Environment{{"PRIMUS_PATH", set}}, "", dir.path(), {usual});
  ASSERT_TRUE(search.install);
  EXPECT_EQ(search.install->root, set);
  EXPECT_EQ(search.install->found_by, "PRIMUS_PATH");
  EXPECT_EQ(search.install->version, "26.4");
  EXPECT_EQ(search.install->main_py(), set + "/primus/cli/main.py");
}

TEST(PrimusInstallTest, ConfiguredPathThenCurrentDirectoryThenUsualPlaces) {
  test::TempDir dir;
  std::string configured = MakeCheckout(dir.path() + "/configured");
  std::string usual = MakeCheckout(dir.path() + "/usual");
  auto search = FindPrimus(Environment{}, configured, dir.path(), {usual});
  ASSERT_TRUE(search.install);
  EXPECT_EQ(search.install->found_by, "train.primus_path");
  search = FindPrimus(Environment{}, "", configured, {usual});
  ASSERT_TRUE(search.install);
  EXPECT_EQ(search.install->found_by, "the current directory");
  search = FindPrimus(Environment{}, "", dir.path(), {dir.path() + "/missing", usual});
  ASSERT_TRUE(search.install);
  EXPECT_EQ(search.install->root, usual);
}

TEST(PrimusInstallTest, ASetPathThatIsNoCheckoutIsAnErrorNotSkipped) {
  test::TempDir dir;
  std::string usual = MakeCheckout(dir.path() + "/usual");
  auto search = FindPrimus(Environment{{"PRIMUS_PATH", dir.path() + "/nothing"}}, "", dir.path(), {usual});
  EXPECT_FALSE(search.install);
  EXPECT_NE(search.broken_setting.find("PRIMUS_PATH=" + dir.path() + "/nothing"), std::string::npos);
}

TEST(PrimusInstallTest, NothingFoundListsWhereItLooked) {
  test::TempDir dir;
  auto search = FindPrimus(Environment{}, "", dir.path(), {dir.path() + "/a", dir.path() + "/b"});
  EXPECT_FALSE(search.install);
  ASSERT_EQ(search.tried.size(), 5u);
  EXPECT_EQ(search.tried[0], "PRIMUS_PATH (not set)");
  EXPECT_EQ(search.tried[4], dir.path() + "/b");
}

TEST(PrimusInstallTest, SubcommandsAreItsCliModules) {
  test::TempDir dir;
  PrimusInstall install{MakeCheckout(dir.path() + "/p"), "PRIMUS_PATH", ""};
  EXPECT_EQ(PrimusSubcommands(install), (std::vector<std::string>{"projection", "train"}));
}

}  // namespace
}  // namespace primus::train
