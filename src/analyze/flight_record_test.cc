#include "analyze/flight_record.h"

#include <gtest/gtest.h>

#include "analyze/hang_culprit.h"
#include "util/files.h"

namespace primus::analyze {
namespace {

// Dumps in the format PyTorch documents, written by testdata/flight-recorder/make_dumps.py.
std::string Dump(const std::string& scenario, int rank) {
  return std::string(PRIMUS_SOURCE_DIR) + "/src/analyze/testdata/flight-recorder/" + scenario + "/nccl_trace_rank_" +
         std::to_string(rank);
}

FlightRecord Read(const std::string& scenario, int rank) {
  auto bytes = ReadFile(Dump(scenario, rank));
  EXPECT_TRUE(bytes.ok()) << Dump(scenario, rank);
  auto record = ReadFlightRecord(bytes.ok() ? *bytes : "", Dump(scenario, rank));
  EXPECT_TRUE(record.ok()) << record.error().message;
  return record.ok() ? *record : FlightRecord{};
}

std::vector<RankStacks> Ranks(const std::string& scenario) {
  std::vector<RankStacks> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    RankStacks stacks;
    stacks.rank = rank;
    stacks.host = rank < 2 ? "node0" : "node1";
    stacks.flight = Read(scenario, rank);
    stacks.local_rank = rank % 2;
    ranks.push_back(std::move(stacks));
  }
  return ranks;
}

TEST(FlightRecordTest, ReadsTheProgressOfEachGroupFromTorchScriptsPickle) {
  FlightRecord waiting = Read("behind", 0);
  EXPECT_EQ(waiting.version, "2.5");
  ASSERT_EQ(waiting.groups.size(), 1u);
  const GroupProgress& group = waiting.groups[0];
  EXPECT_EQ(group.group, "0 (default_pg)");
  EXPECT_EQ(group.last_enqueued, 42);
  EXPECT_EQ(group.last_completed, 41);
  EXPECT_EQ(group.pending_seq, 42);
  EXPECT_EQ(group.pending_op, "all_reduce");
  EXPECT_EQ(group.pending_sizes, "[[1024]]");
  EXPECT_EQ(group.pending_state, "scheduled");
  EXPECT_EQ(group.pending_frame, "train.py:44 in train_step");
  FlightRecord behind = Read("behind", 2);
  ASSERT_EQ(behind.groups.size(), 1u);
  EXPECT_EQ(behind.groups[0].last_enqueued, 41);
  EXPECT_EQ(behind.groups[0].pending_seq, -1);
}

TEST(FlightRecordTest, JsonDumpsReadAlike) {
  FlightRecord json = Read("stuck", 1), pickle = Read("stuck", 0);
  ASSERT_EQ(json.groups.size(), 1u);
  ASSERT_EQ(pickle.groups.size(), 1u);
  EXPECT_EQ(json.groups[0].pending_seq, pickle.groups[0].pending_seq);
  EXPECT_EQ(json.groups[0].pending_op, pickle.groups[0].pending_op);
  EXPECT_EQ(json.groups[0].pending_frame, pickle.groups[0].pending_frame);
}

TEST(FlightRecordTest, TheRankBehindInTheSequenceIsNamed) {
  HangVerdict verdict = JudgeHang(Ranks("behind"));
  EXPECT_EQ(verdict.culprits, std::vector<int>{2});
  EXPECT_EQ(verdict.summary,
            "rank 2 is behind in process group 0 (default_pg): rank 2 issued up to #41, while ranks 0, 1, 3 wait in "
            "all_reduce #42 [[1024]] (issued at train.py:44 in train_step)");
  ASSERT_EQ(verdict.details.size(), 1u);
  EXPECT_EQ(verdict.details[0], "rank 2: host node1, local rank 0");
  EXPECT_EQ(verdict.evidence, "flight records");
}

TEST(FlightRecordTest, TheRankInAnotherCollectiveIsNamed) {
  HangVerdict verdict = JudgeHang(Ranks("mismatch"));
  EXPECT_EQ(verdict.culprits, std::vector<int>{1});
  EXPECT_NE(verdict.summary.find("all_reduce #42 [[1024]] (ranks 0, 2, 3), broadcast #42 [[8]] (rank 1)"),
            std::string::npos)
      << verdict.summary;
}

TEST(FlightRecordTest, AllWaitingInOneCollectiveSinglesNoneOut) {
  HangVerdict verdict = JudgeHang(Ranks("stuck"));
  EXPECT_TRUE(verdict.culprits.empty());
  EXPECT_NE(verdict.summary.find("every rank of process group 0 (default_pg) waits in all_reduce #42"),
            std::string::npos)
      << verdict.summary;
}

TEST(FlightRecordTest, StacksThatNameARankOutrankTheRecords) {
  // Rank 3's stack shows it outside any collective: the stacks decide.
  std::vector<RankStacks> ranks = Ranks("stuck");
  for (RankStacks& stacks : ranks) {
    stacks.text = "Current thread 0x1 (most recent call first):\n"
                  "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1 in all_reduce\n"
                  "  File \"/work/train.py\", line 44 in train_step\n";
  }
  ranks[3].text = "Current thread 0x1 (most recent call first):\n  File \"/work/data.py\", line 9 in next_batch\n";
  ranks[3].last_step = 41;
  HangVerdict verdict = JudgeHang(ranks);
  EXPECT_EQ(verdict.culprits, std::vector<int>{3});
  EXPECT_EQ(verdict.evidence, "stacks and flight records");
  EXPECT_EQ(verdict.details[0], "rank 3: host node1, local rank 1, last step 41, at data.py:9 in next_batch");
  EXPECT_NE(FormatVerdict(verdict).find("group 0 (default_pg): completed #41 of #42, waits in all_reduce #42"),
            std::string::npos)
      << FormatVerdict(verdict);
}

TEST(FlightRecordTest, NotADumpIsAClearError) {
  auto list = ReadFlightRecord("[1, 2]", "rank 0's dump");
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("rank 0's dump: not a flight recorder dump"), std::string::npos);
  EXPECT_FALSE(ReadFlightRecord("{\"entries\": ", "dump").ok());
  auto truncated = ReadFile(Dump("behind", 0));
  ASSERT_TRUE(truncated.ok());
  EXPECT_FALSE(ReadFlightRecord(truncated->substr(0, truncated->size() / 2), "dump").ok());
  // Entries of the wrong shape are skipped, not trusted.
  auto odd = ReadFlightRecord(R"({"entries": [1, {"collective_seq_id": "x"}, {"pg_id": 0, "collective_seq_id": 3,
                                  "state": "completed"}]})", "dump");
  ASSERT_TRUE(odd.ok());
  ASSERT_EQ(odd->groups.size(), 1u);
  EXPECT_EQ(odd->groups[0].last_completed, 3);
}

}  // namespace
}  // namespace primus::analyze
