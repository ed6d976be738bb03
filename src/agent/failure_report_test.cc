#include "agent/failure_report.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include "agent/agent_test_util.h"
#include "util/files.h"

namespace primus::agent {
namespace {

WorkerFailure Failure(int rank, double timestamp, double detected_at = 0) {
  WorkerFailure failure;
  failure.host = "node1";
  failure.rank = rank;
  failure.local_rank = rank;
  failure.pid = 1000 + rank;
  failure.exit_code = 1;
  failure.timestamp = timestamp;
  failure.detected_at = detected_at ? detected_at : timestamp;
  return failure;
}

TEST(FailureReportTest, EarliestTimestampIsTheRootCauseAndTiesKeepDetectionOrder) {
  std::vector<WorkerFailure> failures = {Failure(0, 100.5), Failure(1, 100.0), Failure(2, 100.0)};
  EXPECT_EQ(ChooseRootCause(failures), 1u);
  failures = {Failure(3, 7)};
  EXPECT_EQ(ChooseRootCause(failures), 0u);
}

TEST(FailureReportTest, WithinOneSecondTheFirstDetectedFailureIsTheRootCause) {
  // Both ranks wrote @record files stamped 100 (whole seconds): rank 1 raised
  // first and was seen first; rank 0 died of the broken connection after it.
  std::vector<WorkerFailure> failures = {Failure(0, 100, 100.9), Failure(1, 100, 100.4)};
  EXPECT_EQ(ChooseRootCause(failures), 1u);
  // An error file stamped a second earlier wins even if seen later (a hang).
  failures = {Failure(0, 100, 100.2), Failure(1, 99, 101.0)};
  EXPECT_EQ(ChooseRootCause(failures), 1u);
}

TEST(FailureReportTest, DescribesExitCodesAndSignals) {
  EXPECT_EQ(DescribeEnding(3, 0), "exit code 3");
  EXPECT_EQ(DescribeEnding(139, SIGSEGV), "signal 11 (SIGSEGV)");
}

TEST(FailureReportTest, LastLinesReadsTheEndOfALongFile) {
  testing::ScopedTempDir dir("failure");
  std::string path = dir.path() + "/rank.log";
  std::string content;
  for (int i = 0; i < 5000; ++i) content += "line " + std::to_string(i) + "\n";
  ASSERT_TRUE(WriteFileAtomic(path, content).ok());
  std::vector<std::string> lines = LastLines(path, 3);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "line 4997");
  EXPECT_EQ(lines[2], "line 4999");
  EXPECT_TRUE(LastLines("/nonexistent", 3).empty());
}

TEST(FailureReportTest, BannerNamesTheRootCauseItsErrorAndItsOutput) {
  testing::ScopedTempDir scratch("failure");
  const std::string& dir = scratch.path();
  BannerInput input;
  input.root_cause = Failure(1, 1795341600.25);
  input.root_cause.log_file = dir + "/node1.rank1.log";
  ASSERT_TRUE(WriteFileAtomic(input.root_cause.log_file, "2026 O step 1\n2026 E Traceback\n").ok());
  input.root_cause.error_file = dir + "/node1.rank1.error.json";
  input.root_cause.message = "ValueError: boom";
  input.root_cause.traceback = "Traceback (most recent call last):\n  File \"t.py\"\nValueError: boom\n";
  WorkerFailure other = Failure(3, 1795341601);
  other.signal = SIGSEGV;
  other.exit_code = 128 + SIGSEGV;
  input.other_failures = {other};
  input.stopped_ranks = {0, 2};

  std::string banner = FormatFailureBanner(input);
  EXPECT_NE(banner.find("Root cause: rank 1 (local rank 1) on node1, pid 1001 failed with exit code 1"),
            std::string::npos)
      << banner;
  EXPECT_NE(banner.find("(from its error file)"), std::string::npos);
  EXPECT_NE(banner.find("message:    ValueError: boom"), std::string::npos);
  EXPECT_NE(banner.find("    Traceback (most recent call last):"), std::string::npos);
  EXPECT_NE(banner.find("last 2 lines of " + input.root_cause.log_file), std::string::npos);
  EXPECT_NE(banner.find("    2026 E Traceback"), std::string::npos);
  EXPECT_NE(banner.find("rank 3 (local rank 3) on node1, pid 1003: signal 11 (SIGSEGV)"), std::string::npos);
  EXPECT_NE(banner.find("Stopped by the agent: ranks 0, 2"), std::string::npos);
}

// The traceback once (from the error file, not again from the log), the
// failure's signature with its fix as analyze logs knows it, and what to run next.
TEST(FailureReportTest, BannerShowsTheTracebackOnceAndTheSignaturesFix) {
  testing::ScopedTempDir scratch("failure");
  ASSERT_TRUE(MakeDirs(scratch.path() + "/logs/attempt_1").ok());
  BannerInput input;
  input.root_cause = Failure(1, 1795341600.25);
  input.root_cause.log_file = scratch.path() + "/logs/attempt_1/node1.rank1.log";
  std::string traceback = "Traceback (most recent call last):\n  File \"train.py\", line 9, in step\n"
                          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
  ASSERT_TRUE(WriteFileAtomic(input.root_cause.log_file,
                              "2026 O step 41\n2026 E Traceback (most recent call last):\n"
                              "2026 E   File \"train.py\", line 9, in step\n"
                              "2026 E torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n").ok());
  input.root_cause.error_file = scratch.path() + "/error.json";
  input.root_cause.message = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
  input.root_cause.traceback = traceback;
  std::string banner = FormatFailureBanner(input);
  size_t first = banner.find("Traceback (most recent call last)");
  ASSERT_NE(first, std::string::npos) << banner;
  EXPECT_EQ(banner.find("Traceback (most recent call last)", first + 1), std::string::npos) << "once:\n" << banner;
  EXPECT_NE(banner.find("last 1 lines of " + input.root_cause.log_file + ":\n    2026 O step 41\n"),
            std::string::npos)
      << banner;
  EXPECT_NE(banner.find("  signature:  "), std::string::npos) << banner;
  EXPECT_NE(banner.find("out of memory"), std::string::npos);
  EXPECT_NE(banner.find("  fix:        "), std::string::npos) << banner;
  EXPECT_NE(banner.find("Next: primus-cli analyze logs " + scratch.path() + "/logs\n"), std::string::npos) << banner;
}

TEST(FailureReportTest, BannerForAHang) {
  BannerInput input;
  input.root_cause = Failure(2, 1795341600);
  input.root_cause.hung = true;
  input.root_cause.signal = SIGTERM;
  input.root_cause.exit_code = 143;
  input.hang_timeout_s = 30;
  std::string banner = FormatFailureBanner(input);
  EXPECT_NE(banner.find("hung: no output and no heartbeat for 30 s"), std::string::npos) << banner;
  EXPECT_NE(banner.find("(detected by the agent)"), std::string::npos);
}

// Node 0 named rank 5 (on node 1) as the hang's culprit, but node 1 was
// stopped before its own watchdog fired: rank 5 failed in no way node 1
// saw. It is still the root cause, made from its place.
TEST(FailureReportTest, TheHangsCulpritIsTheRootCauseEvenWhenItsNodeSawNoFailure) {
  std::optional<WorkerFailure> root = Failure(1, 100);
  root->hung = true;
  std::vector<WorkerFailure> others = {Failure(0, 101)};
  PreferRankAsRootCause(5, nullptr, &root, &others);
  EXPECT_EQ(root->rank, 1) << "without its place nothing changes";
  analyze::RankPlace place;
  place.rank = 5;
  place.host = "node2";
  place.local_rank = 1;
  PreferRankAsRootCause(5, &place, &root, &others);
  EXPECT_EQ(root->rank, 5);
  EXPECT_EQ(root->host, "node2");
  ASSERT_EQ(others.size(), 2u);
  EXPECT_EQ(others[0].rank, 1) << "the first victim is listed among the other failures";
  BannerInput input;
  input.root_cause = *root;
  input.other_failures = others;
  std::string banner = FormatFailureBanner(input);
  EXPECT_NE(banner.find("Root cause: rank 5 (local rank 1) on node2 hung: the other ranks wait for it; stopped with "
                        "the job\n"),
            std::string::npos)
      << banner;
  EXPECT_EQ(banner.find("log:"), std::string::npos) << "no log is known for it: none is made up";
  // Among the others already: the two change places, as before.
  PreferRankAsRootCause(1, &place, &root, &others);
  EXPECT_EQ(root->rank, 1);
}

}  // namespace
}  // namespace primus::agent
