#include "runtime/ssh_session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "io/signal_channel.h"

namespace primus::runtime {
namespace {

TEST(SshSessionTest, JobExitCodeIsNodeZerosUnlessItsConnectionFailed) {
  EXPECT_EQ(JobExitCode({0, 0, 0}, 0), 0);
  EXPECT_EQ(JobExitCode({7, 7, 7}, 0), 7);
  EXPECT_EQ(JobExitCode({255, 129, 129}, 0), 129);
  EXPECT_EQ(JobExitCode({255, 255}, 0), 255);
  EXPECT_EQ(JobExitCode({0, 0}, SIGINT), 130);
}

TEST(SshSessionTest, RunParallelKeepsOrderAndBoundsTime) {
  std::vector<ParallelCommand> commands;
  for (int i = 0; i < 6; ++i) {
    commands.push_back({{"sh", "-c", "cat; sleep 0.3; echo done " + std::to_string(i)}, "in" + std::to_string(i), 5});
  }
  commands.push_back({{"sleep", "10"}, "", 0.5});
  auto start = std::chrono::steady_clock::now();
  auto run = RunParallel(commands, 8);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<CommandResult>& results = run.results;
  ASSERT_EQ(results.size(), 7u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(results[i].out, "in" + std::to_string(i) + "done " + std::to_string(i) + "\n");
  EXPECT_TRUE(results[6].timed_out);
  EXPECT_LT(seconds, 3.0);  // in parallel, not 6 x 0.3 s + 0.5 s... and never the sleep's 10 s
}

// Ctrl-C (here SIGTERM) during the host checks: the running commands end
// at once, the queued one never starts, and the signal is reported.
TEST(SshSessionTest, ASignalStopsEveryRunningCommandAndStartsNoMore) {
  std::vector<ParallelCommand> commands(3, ParallelCommand{{"sleep", "30"}, "", 60});
  std::thread sender([] {
    io::BlockAllSignalsInThisThread();  // the signal is the process's, read by RunParallel
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(::getpid(), SIGTERM);
  });
  auto start = std::chrono::steady_clock::now();
  auto run = RunParallel(commands, 2);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sender.join();
  EXPECT_EQ(run.stop_signal, SIGTERM);
  ASSERT_EQ(run.results.size(), 3u);
  for (const CommandResult& result : run.results) EXPECT_TRUE(result.stopped);
  EXPECT_EQ(run.results[0].exit_code, 128 + SIGTERM);
  EXPECT_EQ(run.results[2].exit_code, -1) << "the third command never started";
  EXPECT_LT(seconds, 5.0);
}

// "ssh" children stood in for by sh: the token arrives first on stdin, the
// stdout lines pass unchanged, the stderr lines name the host, and the job's
// code is node 0's.
TEST(SshSessionTest, SessionsGetTheTokenAndReportNodeZerosCode) {
  std::vector<SshSession> sessions = {
      {"h0", {"sh", "-c", "read t; echo \"[h0:0] token $t\"; echo agent says >&2; exit 3"}},
      {"h1", {"sh", "-c", "read t; echo \"[h1:1] token $t\"; exit 0"}},
  };
  SessionOptions options;
  options.token = "abc123";
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  auto code = RunSessions(sessions, options);
  std::string out = testing::internal::GetCapturedStdout();
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 3);
  EXPECT_NE(out.find("[h0:0] token abc123\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[h1:1] token abc123\n"), std::string::npos) << out;
  EXPECT_NE(err.find("[h0] agent says\n"), std::string::npos) << err;
}

// Once node 0 ended, a session that never does is ended after the grace.
TEST(SshSessionTest, LingeringSessionsEndAfterNodeZero) {
  std::vector<SshSession> sessions = {
      {"h0", {"sh", "-c", "exit 0"}},
      {"h1", {"sleep", "30"}},
  };
  SessionOptions options;
  options.token = "t";
  options.finish_grace_s = 0.3;
  auto start = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  auto code = RunSessions(sessions, options);
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_NE(err.find("[h1] still running after node 0 ended"), std::string::npos) << err;
}

}  // namespace
}  // namespace primus::runtime
