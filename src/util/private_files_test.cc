#include "util/private_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus {
namespace {

constexpr uid_t kOtherUser = 65534;  // nobody

mode_t ModeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

// The umask must not decide what the tests see.
class PrivateFilesTest : public ::testing::Test {
 protected:
  void SetUp() override { old_umask_ = ::umask(022); }
  void TearDown() override {
    ::umask(old_umask_);
    ShareWithGroup(false);
  }
  ScopedTempDir scoped_{"private"};
  const std::string& dir() const { return scoped_.path(); }

 private:
  mode_t old_umask_ = 022;
};

TEST_F(PrivateFilesTest, NewDirectoriesAndFilesAreTheUsersAlone) {
  std::string path = dir() + "/run";
  bool created = false;
  ASSERT_TRUE(MakePrivateDir(path, &created).ok());
  EXPECT_TRUE(created);
  EXPECT_EQ(ModeOf(path), 0700u);
  auto fd = CreatePrivateFile(path + "/rank0.log");
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  ::close(*fd);
  EXPECT_EQ(ModeOf(path + "/rank0.log"), 0600u);
  ASSERT_TRUE(WriteFileAtomic(path + "/metadata.json", "{}\n").ok());
  EXPECT_EQ(ModeOf(path + "/metadata.json"), 0600u);
  // Taken again: it is ours.
  ASSERT_TRUE(MakePrivateDir(path, &created).ok());
  EXPECT_FALSE(created);
}

TEST_F(PrivateFilesTest, SharingWithTheGroupGivesItReadAccessAndAStricterUmaskWins) {
  ShareWithGroup(true);
  ASSERT_TRUE(MakePrivateDir(dir() + "/team").ok());
  EXPECT_EQ(ModeOf(dir() + "/team"), 0750u);
  ASSERT_TRUE(WriteFileAtomic(dir() + "/team/a", "x").ok());
  EXPECT_EQ(ModeOf(dir() + "/team/a"), 0640u);
  ::umask(077);
  ASSERT_TRUE(MakePrivateDir(dir() + "/strict").ok());
  EXPECT_EQ(ModeOf(dir() + "/strict"), 0700u);
}

TEST_F(PrivateFilesTest, ADirectoryOfAnotherUserIsRefusedNamingItsOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  std::string path = dir() + "/primus-0";
  ASSERT_EQ(::mkdir(path.c_str(), 0777), 0);
  ASSERT_EQ(::chown(path.c_str(), kOtherUser, kOtherUser), 0);
  Status made = MakePrivateDir(path);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().code, ExitCode::kUnavailable);
  EXPECT_NE(made.error().message.find(path), std::string::npos) << made.error().message;
  EXPECT_NE(made.error().message.find("owned by nobody (uid 65534)"), std::string::npos) << made.error().message;
}

TEST_F(PrivateFilesTest, ASymbolicLinkInADirectorysPlaceIsRefusedEvenToADirectoryOfOurs) {
  ASSERT_EQ(::mkdir((dir() + "/real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((dir() + "/real").c_str(), (dir() + "/link").c_str()), 0);
  Status made = MakePrivateDir(dir() + "/link");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("symbolic link"), std::string::npos) << made.error().message;
  // A path the user named may be a link of the user's own.
  EXPECT_TRUE(CheckPrivateDir(dir() + "/link", LinkPolicy::kOwnLinkOnly).ok());
}

TEST_F(PrivateFilesTest, AnotherUsersLinkIsRefusedEvenWhereTheUsersOwnWouldDo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link to another user";
  ASSERT_EQ(::mkdir((dir() + "/real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((dir() + "/real").c_str(), (dir() + "/link").c_str()), 0);
  ASSERT_EQ(::lchown((dir() + "/link").c_str(), kOtherUser, kOtherUser), 0);
  Status checked = CheckPrivateDir(dir() + "/link", LinkPolicy::kOwnLinkOnly);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().message.find("symbolic link owned by nobody"), std::string::npos);
}

TEST_F(PrivateFilesTest, ADirectoryOthersMayWriteToIsRefusedWithTheFix) {
  std::string path = dir() + "/open";
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0777), 0);
  Status made = MakePrivateDir(path);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("mode 0777"), std::string::npos) << made.error().message;
  EXPECT_NE(made.error().hint.find("chmod go-w " + path), std::string::npos);
}

TEST_F(PrivateFilesTest, AParentOpenToEveryoneNeedsTheStickyBit) {
  std::string open = dir() + "/open";
  ASSERT_EQ(::mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  Status made = MakePrivateDir(open + "/run");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("no sticky bit"), std::string::npos) << made.error().message;
  EXPECT_FALSE(PathExists(open + "/run"));
  ASSERT_EQ(::chmod(open.c_str(), 01777), 0);  // as /tmp
  EXPECT_TRUE(MakePrivateDir(open + "/run").ok());
}

TEST_F(PrivateFilesTest, APlantedLinkIsNeverWrittenThrough) {
  std::string target = dir() + "/victim";
  ASSERT_TRUE(WriteFileAtomic(target, "precious\n", 0644).ok());
  ASSERT_EQ(::symlink(target.c_str(), (dir() + "/rank0.log").c_str()), 0);
  auto created = CreatePrivateFile(dir() + "/rank0.log");
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("symbolic link"), std::string::npos) << created.error().message;
  auto appended = OpenPrivateFileForAppend(dir() + "/rank0.log");
  ASSERT_FALSE(appended.ok());
  // An atomic write replaces the link itself.
  ASSERT_EQ(::symlink(target.c_str(), (dir() + "/metadata.json").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(dir() + "/metadata.json", "{}\n").ok());
  EXPECT_EQ(*ReadFile(target), "precious\n");
  EXPECT_EQ(*ReadFile(dir() + "/metadata.json"), "{}\n");
  EXPECT_FALSE(S_ISLNK(ModeOf(dir() + "/metadata.json")));
}

TEST_F(PrivateFilesTest, AppendingRefusesAnotherUsersFileAndAPlantedPipe) {
  std::string fifo = dir() + "/history.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  EXPECT_FALSE(OpenPrivateFileForAppend(fifo).ok());  // and does not wait for a reader
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  std::string other = dir() + "/other.jsonl";
  ASSERT_TRUE(WriteFileAtomic(other, "x\n").ok());
  ASSERT_EQ(::chown(other.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_FALSE(OpenPrivateFileForAppend(other).ok());
  auto ours = OpenPrivateFileForAppend(dir() + "/ours.jsonl");
  ASSERT_TRUE(ours.ok());
  ::close(*ours);
}

TEST_F(PrivateFilesTest, AFreshDirectoryNeverReusesAnExistingName) {
  auto first = MakeFreshDir(dir(), "run1");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, dir() + "/run1");
  auto second = MakeFreshDir(dir(), "run1");
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*second, *first);
  EXPECT_EQ(second->rfind(dir() + "/run1_", 0), 0u) << *second;
  EXPECT_EQ(second->size(), (dir() + "/run1_").size() + 8);
  EXPECT_EQ(ModeOf(*second), 0700u);
}

TEST_F(PrivateFilesTest, MakePrivateDirsChecksEveryComponentBelowTheBase) {
  ASSERT_TRUE(MakePrivateDirs(dir() + "/workspace", "exp_1/logs").ok());
  EXPECT_TRUE(IsDirectory(dir() + "/workspace/exp_1/logs"));
  EXPECT_EQ(ModeOf(dir() + "/workspace/exp_1"), 0700u);
  ASSERT_EQ(::symlink("/etc", (dir() + "/workspace/exp_2").c_str()), 0);
  EXPECT_FALSE(MakePrivateDirs(dir() + "/workspace", "exp_2/logs").ok());
  EXPECT_FALSE(MakePrivateDirs(dir() + "/workspace", "../escape").ok());
}

}  // namespace
}  // namespace primus
