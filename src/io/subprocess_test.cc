#include "io/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

namespace primus {
namespace {

// Running (not a zombie waiting for init to reap it).
bool IsRunning(pid_t pid) {
  FILE* stat = fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!stat) return false;
  char state = '?';
  int ignored_pid;
  char name[256];
  bool parsed = fscanf(stat, "%d %255s %c", &ignored_pid, name, &state) == 3;
  fclose(stat);
  return parsed && state != 'Z' && state != 'X';
}

TEST(SubprocessTest, CapturesOutputAndExitCode) {
  auto result = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 7"});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 7);
  EXPECT_EQ(result->out, "out\n");
  EXPECT_EQ(result->err, "err\n");
  EXPECT_FALSE(result->timed_out);
}

TEST(SubprocessTest, MissingExecutableIsUnavailable) {
  auto result = RunCommand({"no-such-command-primus-test"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ExitCode::kUnavailable);
  EXPECT_NE(result.error().message.find("no-such-command-primus-test"), std::string::npos);
}

TEST(SubprocessTest, EnvironmentIsLayered) {
  CommandOptions options;
  options.env["PRIMUS_SUBPROCESS_TEST"] = "set";
  options.env["HOME"] = std::nullopt;
  auto result = RunCommand({"sh", "-c", "echo \"$PRIMUS_SUBPROCESS_TEST:${HOME-unset}\""}, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->out, "set:unset\n");
}

TEST(SubprocessTest, StdinAndWorkingDirectory) {
  CommandOptions options;
  options.stdin_data = "hello\n";
  options.cwd = "/";
  auto result = RunCommand({"sh", "-c", "read line; echo \"$line $(pwd)\""}, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->out, "hello /\n");
}

TEST(SubprocessTest, TimeoutKillsTheWholeGroup) {
  CommandOptions options;
  options.timeout_s = 0.3;
  options.kill_grace_s = 0.2;
  timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  // The shell ignores SIGTERM; its background child must die with the group.
  auto result = RunCommand({"sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait"}, options);
  clock_gettime(CLOCK_MONOTONIC, &end);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->timed_out);
  EXPECT_EQ(result->exit_code, 128 + SIGKILL);
  EXPECT_GE(result->seconds, 0.3) << "the elapsed time covers the wait up to the timeout";
  double elapsed = static_cast<double>(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
  EXPECT_LT(elapsed, 5.0);
  pid_t child = static_cast<pid_t>(std::stol(result->out));
  // SIGKILL is delivered at once, but a loaded machine may take a moment to
  // schedule the exit.
  for (int i = 0; i < 200 && IsRunning(child); ++i) usleep(10000);
  EXPECT_FALSE(IsRunning(child)) << "the background sleep survived the timeout";
}

TEST(SubprocessTest, AReadableStopDescriptorEndsTheCommandLikeATimeout) {
  int stop[2];
  ASSERT_EQ(pipe(stop), 0);
  CommandOptions options;
  options.stop_fd = stop[0];
  options.kill_grace_s = 0.2;
  // One byte, 0.3 s in: the command ends then, not after its 30 s.
  std::thread stopper([&] {
    usleep(300000);
    EXPECT_EQ(write(stop[1], "x", 1), 1);
  });
  auto result = RunCommand({"sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait"}, options);
  stopper.join();
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->stopped);
  EXPECT_FALSE(result->timed_out);
  EXPECT_LT(result->seconds, 5.0);
  pid_t child = static_cast<pid_t>(std::stol(result->out));
  for (int i = 0; i < 200 && IsRunning(child); ++i) usleep(10000);
  EXPECT_FALSE(IsRunning(child)) << "the background sleep survived the stop";
  // The byte stays: a command started later is stopped at once.
  auto second = RunCommand({"sleep", "30"}, options);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->stopped);
  EXPECT_EQ(second->exit_code, 128 + SIGTERM);
  close(stop[0]);
  close(stop[1]);
}

TEST(SubprocessTest, StreamsLinesAsTheyArrive) {
  std::vector<std::string> lines;
  CommandOptions options;
  options.on_line = [&](bool is_stderr, const std::string& line) { lines.push_back((is_stderr ? "E:" : "O:") + line); };
  auto result = RunCommand({"sh", "-c", "echo a; echo b >&2; printf c"}, options);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "O:c");
}

TEST(SubprocessTest, TailKeepsTheLastLines) {
  CommandResult result;
  result.out = "1\n2\n3\n";
  result.err = "4\n";
  EXPECT_EQ(result.Tail(2), "3\n4");
}

}  // namespace
}  // namespace primus
