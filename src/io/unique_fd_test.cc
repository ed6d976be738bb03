#include "io/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace primus::io {
namespace {

TEST(UniqueFdTest, ClosesOnDestructionAndReleaseKeepsOpen) {
  int raw = -1;
  {
    UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    raw = fd.get();
  }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);

  UniqueFd kept(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  raw = kept.Release();
  EXPECT_FALSE(kept.valid());
  EXPECT_NE(::fcntl(raw, F_GETFD), -1);
  ::close(raw);
}

TEST(UniqueFdTest, PipeEndsAreCloseOnExecAndWriteAllSendsEverything) {
  PipeEnds pipe;
  ASSERT_TRUE(MakePipe(&pipe));
  EXPECT_TRUE(::fcntl(pipe.read.get(), F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(::fcntl(pipe.write.get(), F_GETFD) & FD_CLOEXEC);
  std::string message = "hello through the pipe";
  ASSERT_TRUE(WriteAll(pipe.write.get(), message.data(), message.size()));
  pipe.write.Reset();
  char buffer[64];
  ssize_t n = ::read(pipe.read.get(), buffer, sizeof(buffer));
  EXPECT_EQ(std::string(buffer, static_cast<size_t>(n)), message);
}

TEST(UniqueFdTest, WriteAllReportsABrokenPipe) {
  PipeEnds pipe;
  ASSERT_TRUE(MakePipe(&pipe));
  pipe.read.Reset();
  signal(SIGPIPE, SIG_IGN);
  EXPECT_FALSE(WriteAll(pipe.write.get(), "x", 1));
  EXPECT_EQ(errno, EPIPE);
  signal(SIGPIPE, SIG_DFL);
}

}  // namespace
}  // namespace primus::io
