#include "util/progress_line.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "util/log.h"

namespace primus {
namespace {

// Everything written so far to the other end of `fd`.
std::string Drain(int fd) {
  std::string out;
  char buffer[4096];
  while (true) {
    pollfd waiter{fd, POLLIN, 0};
    if (::poll(&waiter, 1, 50) <= 0) break;
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

struct Pty {
  int master = -1, slave = -1;
  Pty() {
    termios raw{};
    cfmakeraw(&raw);  // bytes as written: no "\n" -> "\r\n"
    winsize size{};
    size.ws_col = 200;
    size.ws_row = 24;
    EXPECT_EQ(::openpty(&master, &slave, nullptr, &raw, &size), 0);
  }
  ~Pty() {
    ::close(master);
    ::close(slave);
  }
};

TEST(FormatClockTest, MinutesThenHours) {
  EXPECT_EQ(FormatClock(0), "0:00");
  EXPECT_EQ(FormatClock(7.2), "0:07");
  EXPECT_EQ(FormatClock(754), "12:34");
  EXPECT_EQ(FormatClock(3723), "1:02:03");
}

TEST(FormatProgressTextTest, NamesWorkCountElapsedAndEta) {
  EXPECT_EQ(FormatProgressText("benchmark gemm: shape", 3, 7, 12, "(2048x2048x2048)"),
            "benchmark gemm: shape 3/7 (2048x2048x2048)  0:12 elapsed, ETA 0:16");
  EXPECT_EQ(FormatProgressText("analyze logs: file", 0, 10, 1, ""), "analyze logs: file 0/10  0:01 elapsed, ETA -");
}

TEST(ProgressLineTest, OnATerminalRedrawsOneLineInPlaceAndClearsIt) {
  Pty pty;
  {
    ProgressLine line("work", true, pty.slave);
    line.Update(0, 3);
    line.Update(3, 3, "done");
  }
  std::string out = Drain(pty.master);
  EXPECT_NE(out.find("\r\033[Kwork 0/3  0:00 elapsed, ETA -"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\033[Kwork 3/3 done  0:00 elapsed, ETA 0:00"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("\r\033[K")) << "the line is cleared at the end: " << out;
  EXPECT_EQ(out.find('\n'), std::string::npos) << "never a new line: " << out;
}

TEST(ProgressLineTest, RedrawsAtMostEveryTenthOfASecond) {
  Pty pty;
  ProgressLine line("work", true, pty.slave);
  for (int i = 0; i < 50; ++i) line.Update(i, 100);
  std::string out = Drain(pty.master);
  size_t draws = 0;
  for (size_t at = out.find("work "); at != std::string::npos; at = out.find("work ", at + 1)) ++draws;
  EXPECT_LE(draws, 2u) << out;
}

TEST(ProgressLineTest, KeepsToTheTerminalsWidth) {
  Pty pty;
  winsize narrow{};
  narrow.ws_col = 20;
  narrow.ws_row = 24;
  ASSERT_EQ(::ioctl(pty.slave, TIOCSWINSZ, &narrow), 0);
  ProgressLine line("a long description of the work", true, pty.slave);
  line.Update(1, 2);
  std::string out = Drain(pty.master);
  EXPECT_EQ(out, "\r\033[Ka long description ") << "19 columns: no wrap";
}

TEST(ProgressLineTest, OtherOutputLiftsTheLineOffAndPutsItBack) {
  Pty pty;
  ProgressLine line("work", true, pty.slave);
  line.Update(1, 2);
  Drain(pty.master);
  {
    LiftProgressLine lift(pty.slave);
    ASSERT_EQ(::write(pty.slave, "a log line\n", 11), 11);
  }
  EXPECT_EQ(Drain(pty.master), "\r\033[Ka log line\nwork 1/2  0:00 elapsed, ETA 0:00");
  line.Clear();
  Drain(pty.master);
  {
    LiftProgressLine lift(pty.slave);  // nothing drawn: nothing added
    ASSERT_EQ(::write(pty.slave, "x\n", 2), 2);
  }
  EXPECT_EQ(Drain(pty.master), "x\n");
}

TEST(ProgressLineTest, InAPipeWritesNothingAtAll) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::dup2(STDERR_FILENO, 100);
  ::dup2(fds[1], STDERR_FILENO);  // stderr is a pipe now, as under `2>&1 | tee`
  bool should = ProgressLine::ShouldShow();
  {
    ProgressLine line("work");
    line.Update(1, 2);
    line.Update(2, 2);
    line.Clear();
  }
  ::dup2(100, STDERR_FILENO);
  ::close(100);
  ::close(fds[1]);
  EXPECT_FALSE(should);
  EXPECT_EQ(Drain(fds[0]), "");
  ::close(fds[0]);
}

TEST(ProgressLineTest, QuietSilencesItOnATerminalToo) {
  Pty pty;
  ::dup2(STDERR_FILENO, 100);
  ::dup2(pty.slave, STDERR_FILENO);
  bool on_terminal = ProgressLine::ShouldShow();
  log::SetLevel(log::Level::kWarn);  // --quiet
  bool quiet = ProgressLine::ShouldShow();
  log::SetLevel(log::Level::kInfo);
  ::dup2(100, STDERR_FILENO);
  ::close(100);
  EXPECT_TRUE(on_terminal);
  EXPECT_FALSE(quiet);
}

}  // namespace
}  // namespace primus
