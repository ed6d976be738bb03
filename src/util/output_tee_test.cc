#include "util/output_tee.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus {
namespace {

ino_t InodeOf(int fd) {
  struct stat st{};
  ::fstat(fd, &st);
  return st.st_ino;
}

TEST(OutputTeeTest, CopiesOwnAndChildOutputAndRestoresTheTerminal) {
  ScopedTempDir dir("tee");
  std::string path = dir.path() + "/logs/run.log";
  ino_t out_before = InodeOf(STDOUT_FILENO), err_before = InodeOf(STDERR_FILENO);
  {
    auto tee = OutputTee::Start(path);
    ASSERT_TRUE(tee.ok()) << tee.error().Format();
    EXPECT_NE(InodeOf(STDOUT_FILENO), out_before);
    std::cout << "from stdout\n" << std::flush;
    std::cerr << "from stderr\n";
    ASSERT_EQ(std::system("echo from a child; echo child error >&2"), 0);
  }
  EXPECT_EQ(InodeOf(STDOUT_FILENO), out_before);
  EXPECT_EQ(InodeOf(STDERR_FILENO), err_before);
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << "the directory is created";
  for (const char* line : {"from stdout\n", "from stderr\n", "from a child\n", "child error\n"}) {
    EXPECT_NE(text->find(line), std::string::npos) << line << " in:\n" << *text;
  }
}

TEST(OutputTeeTest, ADaemonHoldingThePipeDoesNotHangTheEnd) {
  ScopedTempDir dir("tee");
  std::string path = dir.path() + "/run.log";
  {
    auto tee = OutputTee::Start(path, 0.2);
    ASSERT_TRUE(tee.ok());
    ASSERT_EQ(std::system("(sleep 3; echo late) & echo started"), 0);
  }
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("started"), std::string::npos);
  EXPECT_EQ(text->find("late"), std::string::npos);
}

TEST(OutputTeeTest, UnwritablePathIsUnavailable) {
  auto tee = OutputTee::Start("/proc/self/no/such.log");
  ASSERT_FALSE(tee.ok());
  EXPECT_EQ(tee.error().code, ExitCode::kUnavailable);
  EXPECT_NE(tee.error().message.find("/proc/self/no/such.log"), std::string::npos);
}

}  // namespace
}  // namespace primus
