#include "runtime/ssh_session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

namespace primus::runtime {
namespace {

TEST(SshSessionTest, JobExitCodeIsNodeZerosUnlessItsConnectionFailed) {
  EXPECT_EQ(JobExitCode({0, 0, 0}, 0), 0);
  EXPECT_EQ(JobExitCode({7, 7, 7}, 0), 7);
  EXPECT_EQ(JobExitCode({255, 129, 129}, 0), 129);
  EXPECT_EQ(JobExitCode({255, 255}, 0), 255);
  EXPECT_EQ(JobExitCode({0, 0}, SIGINT), 130);
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
