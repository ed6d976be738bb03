#include "analyze/hang_report.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::analyze {
namespace {

namespace fs = std::filesystem;

std::string FlightDumps(const std::string& scenario) {
  return std::string(PRIMUS_SOURCE_DIR) + "/src/analyze/testdata/flight-recorder/" + scenario;
}

const char* kInAllReduce =
    "(Python stacks of every thread, from the worker's own faulthandler)\n"
    "Current thread 0x1 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1436 in all_reduce\n"
    "  File \"/work/train.py\", line 44 in train_step\n";

TEST(HangReportTest, JudgesTheLatestAttemptWithEvidenceAcrossHosts) {
  ScopedTempDir dir;
  std::string logs = JoinPath(dir.path(), "logs");
  ASSERT_TRUE(MakeDirs(JoinPath(logs, "attempt_0")).ok());
  ASSERT_TRUE(MakeDirs(JoinPath(logs, "attempt_1")).ok());
  ASSERT_TRUE(MakeDirs(JoinPath(logs, "attempt_2")).ok());  // started, never hung: no evidence
  // attempt 1: the stacks of two hosts; rank 2 is outside the collective.
  for (int rank : {0, 1, 3}) {
    std::string host = rank < 2 ? "node0" : "node1";
    ASSERT_TRUE(WriteFileAtomic(JoinPath(logs, "attempt_1/" + host + ".rank" + std::to_string(rank) + ".stacks.txt"),
                                kInAllReduce).ok());
  }
  ASSERT_TRUE(WriteFileAtomic(JoinPath(logs, "attempt_1/node1.rank2.pystacks.txt"),
                              "# rank 2, local rank 0, pid 4242, last step 41, host node1\n"
                              "Current thread 0x1 (most recent call first):\n"
                              "  File \"/work/train.py\", line 20 in wait_for_peer\n").ok());
  auto report = LoadHangReport(logs);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->attempt, 1);
  EXPECT_EQ(report->stack_files, 4u);
  EXPECT_EQ(report->verdict.culprits, std::vector<int>{2});
  EXPECT_NE(FormatHangReport(*report).find("rank 2 is at train.py:20 in wait_for_peer on node1"), std::string::npos)
      << FormatHangReport(*report);
  EXPECT_EQ(report->verdict.details, std::vector<std::string>{"rank 2: host node1, local rank 0, last step 41, at "
                                                             "train.py:20 in wait_for_peer"});
  EXPECT_NE(HangReportJson(*report).find("\"culprits\": [\n    2\n  ]"), std::string::npos) << HangReportJson(*report);

  // attempt 0 by number: the flight recorder's dumps only.
  for (int rank = 0; rank < 4; ++rank) {
    std::string name = "nccl_trace_rank_" + std::to_string(rank);
    fs::copy_file(FlightDumps("behind") + "/" + name, JoinPath(logs, "attempt_0/" + name));
  }
  auto first = LoadHangReport(logs, 0);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->flight_dumps, 4u);
  EXPECT_EQ(first->verdict.culprits, std::vector<int>{2});
  EXPECT_EQ(first->verdict.evidence, "flight records");
  // An attempt directory named directly.
  auto direct = LoadHangReport(JoinPath(logs, "attempt_0"));
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(direct->verdict.culprits, std::vector<int>{2});
}

TEST(HangReportTest, NoEvidenceOrABadDumpIsSaid) {
  ScopedTempDir dir;
  ASSERT_TRUE(MakeDirs(JoinPath(dir.path(), "attempt_0")).ok());
  auto none = LoadHangReport(dir.path());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ExitCode::kUnavailable);
  EXPECT_NE(none.error().message.find("no stacks and no flight recorder dumps"), std::string::npos);
  EXPECT_FALSE(LoadHangReport(dir.path(), 7).ok());
  // A dump that is not one is a note; the rest is judged.
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "attempt_0/nccl_trace_rank_1"), "cos\nsystem\n(S'id'\ntR.").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "attempt_0/h.rank0.stacks.txt"), kInAllReduce).ok());
  auto noted = LoadHangReport(dir.path());
  ASSERT_TRUE(noted.ok()) << noted.error().message;
  ASSERT_EQ(noted->notes.size(), 1u);
  EXPECT_NE(noted->notes[0].find("os.system"), std::string::npos) << noted->notes[0];
}

}  // namespace
}  // namespace primus::analyze
