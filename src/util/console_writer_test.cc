#include "util/console_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace primus {
namespace {

// fd 1 pointed at a pipe the test reads (or does not read) for a while.
class ConsoleWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::pipe(pipe_), 0);
    saved_stdout_ = ::dup(1);
    ::dup2(pipe_[1], 1);
  }
  void TearDown() override {
    // Everything still queued goes into the pipe, read here, before fd 1 is
    // the test's stdout again.
    int flags = ::fcntl(pipe_[0], F_GETFL);
    ::fcntl(pipe_[0], F_SETFL, flags & ~O_NONBLOCK);
    std::thread reader([fd = pipe_[0]] {
      char buffer[65536];
      while (::read(fd, buffer, sizeof(buffer)) > 0) {
      }
    });
    console_writer::Stop();
    ::dup2(saved_stdout_, 1);
    ::close(saved_stdout_);
    ::close(pipe_[1]);
    reader.join();
    ::close(pipe_[0]);
  }
  std::string ReadAvailable() {
    std::string text;
    char buffer[65536];
    ::fcntl(pipe_[0], F_SETFL, O_NONBLOCK);
    while (true) {
      ssize_t n = ::read(pipe_[0], buffer, sizeof(buffer));
      if (n <= 0) break;
      text.append(buffer, static_cast<size_t>(n));
    }
    return text;
  }

  int pipe_[2] = {-1, -1};
  int saved_stdout_ = -1;
};

TEST_F(ConsoleWriterTest, AConsoleNobodyReadsNeverBlocksTheCallerAndDropsWholeLines) {
  console_writer::Start(/*limit_bytes=*/64 << 10);
  size_t dropped_before = console_writer::DroppedLines(1);
  std::string line(99, 'x');
  line += '\n';
  auto begin = std::chrono::steady_clock::now();
  // 20 MB: far more than the pipe (64 KiB) and the buffer hold.
  for (int i = 0; i < 200000; ++i) console_writer::Write(1, line);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_LT(seconds, 10) << "writing must never wait for the console";
  EXPECT_GT(console_writer::DroppedLines(1) - dropped_before, 100000u);
  EXPECT_FALSE(console_writer::Drain(0.2)) << "the console has not taken it all";
  std::string taken = ReadAvailable();
  for (int i = 0; i < 1000 && !console_writer::Drain(0.02); ++i) taken += ReadAvailable();
  taken += ReadAvailable();
  ASSERT_FALSE(taken.empty());
  EXPECT_EQ(taken.back(), '\n');
  for (size_t start = 0; start < taken.size();) {
    size_t end = taken.find('\n', start);
    std::string_view got(taken.data() + start, end - start);
    EXPECT_TRUE(got == std::string_view(line).substr(0, 99) || got.find("console line") != std::string_view::npos)
        << "only whole lines reach the console: '" << got.substr(0, 120) << "'";
    start = end + 1;
  }
  EXPECT_NE(taken.find("console lines were dropped while the console was not being read"), std::string::npos);
}

TEST_F(ConsoleWriterTest, WhatIsQueuedArrivesInOrderWhenTheConsoleReads) {
  console_writer::Start();
  size_t dropped_before = console_writer::DroppedLines(1);
  for (int i = 0; i < 1000; ++i) console_writer::Write(1, "line " + std::to_string(i) + "\n");
  std::string taken;
  for (int i = 0; i < 2000 && taken.size() < 8890; ++i) {
    taken += ReadAvailable();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string expected;
  for (int i = 0; i < 1000; ++i) expected += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(taken, expected);
  EXPECT_EQ(console_writer::DroppedLines(1), dropped_before);
}

}  // namespace
}  // namespace primus
