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
