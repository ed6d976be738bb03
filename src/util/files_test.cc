#include "util/files.h"

#include <gtest/gtest.h>

#include "util/scoped_temp_dir.h"
#include <stdlib.h>
#include <sys/stat.h>

namespace primus {
namespace {


TEST(FilesTest, AtomicWriteThenRead) {
  ScopedTempDir scoped("files");
  std::string dir = scoped.path();
  std::string path = dir + "/a/b/c.txt";
  ASSERT_TRUE(MakeDirs(DirName(path)).ok());
  ASSERT_TRUE(WriteFileAtomic(path, "hello\n").ok());
  auto content = ReadFile(path);
  ASSERT_TRUE(content.ok());
  EXPECT_EQ(*content, "hello\n");
  ASSERT_TRUE(WriteFileAtomic(path, "replaced").ok());
  EXPECT_EQ(*ReadFile(path), "replaced");
}

TEST(FilesTest, ReadMissingFileNamesThePath) {
  auto content = ReadFile("/nonexistent/primus/file.yaml");
  ASSERT_FALSE(content.ok());
  EXPECT_NE(content.error().message.find("/nonexistent/primus/file.yaml"), std::string::npos);
}

TEST(FilesTest, ReadRegularFileRefusesDevicesDirectoriesAndPipesBeforeReading) {
  ScopedTempDir scoped("files");
  ASSERT_EQ(::mkfifo((scoped.path() + "/fifo").c_str(), 0600), 0);
  const std::pair<std::string, std::string> cases[] = {{"/dev/zero", "a character device"},
                                                       {"/dev/urandom", "a character device"},
                                                       {scoped.path(), "a directory"},
                                                       {scoped.path() + "/fifo", "a pipe (FIFO)"}};
  for (const auto& [path, kind] : cases) {
    Result<std::string> content = ReadRegularFile(path, 1024);  // a FIFO with no writer must not block
    ASSERT_FALSE(content.ok()) << path;
    EXPECT_EQ(content.error().message, path + " is " + kind + ", not a regular file");
  }
}

TEST(FilesTest, ReadRegularFileRefusesFilesOverTheLimit) {
  ScopedTempDir scoped("files");
  ASSERT_TRUE(WriteFileAtomic(scoped.path() + "/ok", "12345").ok());
  ASSERT_TRUE(WriteFileAtomic(scoped.path() + "/big", "123456").ok());
  EXPECT_EQ(*ReadRegularFile(scoped.path() + "/ok", 5), "12345");
  Result<std::string> big = ReadRegularFile(scoped.path() + "/big", 5);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, scoped.path() + "/big is 6 bytes, larger than the limit of 5 bytes for this input");
  // Files whose size stat cannot tell (/proc) are read, still with the bound.
  Result<std::string> proc = ReadRegularFile("/proc/self/status", 1 << 20);
  ASSERT_TRUE(proc.ok()) << proc.error().message;
  EXPECT_NE(proc->find("Name:"), std::string::npos);
  EXPECT_FALSE(ReadRegularFile("/proc/self/status", 10).ok());
}

TEST(FilesTest, MakeDirsFailsOverAFile) {
  ScopedTempDir scoped("files");
  std::string dir = scoped.path();
  ASSERT_TRUE(WriteFileAtomic(dir + "/file", "x").ok());
  EXPECT_FALSE(MakeDirs(dir + "/file/sub").ok());
}

TEST(FilesTest, FindExecutableSearchesPath) {
  EXPECT_FALSE(FindExecutable("sh").empty());
  EXPECT_TRUE(FindExecutable("definitely-not-a-command-primus").empty());
  EXPECT_EQ(FindExecutable("/bin/sh"), "/bin/sh");
}

TEST(FilesTest, PathHelpers) {
  EXPECT_EQ(DirName("/a/b/c.yaml"), "/a/b");
  EXPECT_EQ(DirName("c.yaml"), ".");
  EXPECT_EQ(JoinPath("/a/b", "c.yaml"), "/a/b/c.yaml");
  EXPECT_EQ(JoinPath("/a/b", "/abs.yaml"), "/abs.yaml");
}

}  // namespace
}  // namespace primus

namespace primus {
namespace {

TEST(FilesTest, SelfExecutableIsThisBinary) {
  Result<std::string> self = SelfExecutable();
  ASSERT_TRUE(self.ok());
  EXPECT_TRUE(self->starts_with("/"));
  EXPECT_NE(self->find("primus_util_tests"), std::string::npos) << *self;
}

}  // namespace
}  // namespace primus
