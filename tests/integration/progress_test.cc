// Progress of long work through the real binary: `benchmark gemm` under a
// pseudo-terminal redraws one line in place ("\r" + clear to end of line)
// while it sweeps; in a pipe, or under --quiet, it prints no progress at all
// and stdout carries the same report.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "run_process.h"

namespace primus::testing {
namespace {

struct TerminalRun {
  int exit_code = -1;
  std::string screen;  // every byte the terminal received, stdout and stderr together
};

// Runs primus-cli with stdin, stdout and stderr on a fresh pseudo-terminal.
TerminalRun RunOnTerminal(const std::vector<std::string>& args, double timeout_s = 120) {
  TerminalRun run;
  int master = -1, slave = -1;
  termios raw{};
  cfmakeraw(&raw);
  winsize size{};
  size.ws_col = 200;
  size.ws_row = 40;
  if (::openpty(&master, &slave, nullptr, &raw, &size) != 0) return run;
  std::vector<std::string> argv = {PRIMUS_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    ::ioctl(slave, TIOCSCTTY, 0);
    for (int fd = 0; fd < 3; ++fd) ::dup2(slave, fd);
    ::close(master);
    ::close(slave);
    std::vector<char*> c_argv;
    for (std::string& arg : argv) c_argv.push_back(arg.data());
    c_argv.push_back(nullptr);
    ::execv(c_argv[0], c_argv.data());
    _exit(127);
  }
  ::close(slave);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd waiter{master, POLLIN, 0};
    if (::poll(&waiter, 1, 100) <= 0) continue;
    ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n <= 0) break;  // EIO: every process holding the terminal is gone
    run.screen.append(buffer, static_cast<size_t>(n));
  }
  int status = 0;
  if (std::chrono::steady_clock::now() >= deadline) ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  ::close(master);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// Three square sizes, each timed for 0.6 s: long enough for several redraws.
const std::vector<std::string> kSweep = {"direct", "--", "benchmark", "gemm", "--sweep", "-M", "1024", "--dtype",
                                         "fp32", "--device", "cpu", "--duration", "0.6", "--warmup", "1"};

TEST(ProgressTest, GemmSweepOnATerminalRedrawsOneLine) {
  TerminalRun run = RunOnTerminal(kSweep);
  ASSERT_EQ(run.exit_code, 0) << run.screen;
  EXPECT_GE(Count(run.screen, "\r\033[Kbenchmark gemm: shape "), 2u) << run.screen;
  EXPECT_NE(run.screen.find("benchmark gemm: shape 0/3 (256x256x256 NN)"), std::string::npos) << run.screen;
  EXPECT_NE(run.screen.find(" elapsed, ETA "), std::string::npos) << run.screen;
  // The line is taken off before the report: the table starts on a clean line.
  size_t table = run.screen.find("rank  host");
  ASSERT_NE(table, std::string::npos) << run.screen;
  size_t last_line = run.screen.rfind("benchmark gemm: shape ");
  EXPECT_LT(last_line, table);
  EXPECT_NE(run.screen.find("\r\033[K", last_line), std::string::npos) << "cleared after the last draw";
}

TEST(ProgressTest, GemmSweepInAPipeShowsNoProgress) {
  ProcessOptions options;
  options.timeout_s = 120;
  ProcessResult piped = RunPrimus(kSweep, options);
  ASSERT_EQ(piped.exit_code, 0) << piped.all();
  EXPECT_EQ(piped.err.find('\r'), std::string::npos) << piped.err;
  EXPECT_EQ(piped.err.find("\033[K"), std::string::npos) << piped.err;
  EXPECT_EQ(piped.all().find("benchmark gemm: shape"), std::string::npos) << piped.all();
  for (const char* size : {"256", "512", "1024"}) {
    std::regex row(fmt::format(R"(\b{0}\s+{0}\s+{0}\s+NN\s+fp32\b)", size));
    EXPECT_TRUE(std::regex_search(piped.out, row)) << "the report is on stdout: " << piped.out;
  }
}

TEST(ProgressTest, QuietSilencesItOnATerminal) {
  std::vector<std::string> quiet = {"--quiet"};
  quiet.insert(quiet.end(), kSweep.begin(), kSweep.end());
  TerminalRun run = RunOnTerminal(quiet);
  ASSERT_EQ(run.exit_code, 0) << run.screen;
  EXPECT_EQ(run.screen.find("benchmark gemm: shape"), std::string::npos) << run.screen;
  EXPECT_NE(run.screen.find("rank  host"), std::string::npos) << run.screen;
}

}  // namespace
}  // namespace primus::testing
