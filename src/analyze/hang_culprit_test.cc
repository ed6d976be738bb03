#include "analyze/hang_culprit.h"

#include <gtest/gtest.h>

namespace primus::analyze {
namespace {

RankStacks Stacks(int rank, std::string host, std::string text) {
  RankStacks stacks;
  stacks.rank = rank;
  stacks.host = std::move(host);
  stacks.text = std::move(text);
  return stacks;
}

// faulthandler's text (Python 3.11), as primus-cli's stack dumper writes it.
std::string InAllReduce() {
  return "Thread 0x00007f00aaaa (most recent call first):\n"
         "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
         "Current thread 0x00007f00bbbb (most recent call first):\n"
         "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1436 in all_reduce\n"
         "  File \"/work/train.py\", line 31 in main\n"
         "  File \"/work/train.py\", line 37 in <module>\n";
}

std::string Sleeping() {
  return "Current thread 0x00007f00cccc (most recent call first):\n"
         "  File \"/work/train.py\", line 20 in wait_for_peer\n"
         "  File \"/work/train.py\", line 29 in main\n"
         "  File \"/work/train.py\", line 37 in <module>\n";
}

TEST(HangCulpritTest, TheRankOutsideTheCollectiveIsNamed) {
  HangVerdict verdict = JudgeHang({Stacks(0, "node0", InAllReduce()), Stacks(1, "node0", InAllReduce()),
                                   Stacks(2, "node1", Sleeping()), Stacks(3, "node1", InAllReduce())});
  EXPECT_EQ(verdict.culprits, std::vector<int>{2});
  EXPECT_EQ(verdict.summary,
            "rank 2 is not in the all_reduce that ranks 0, 1, 3 wait in: rank 2 is at train.py:20 in wait_for_peer on "
            "node1");
  EXPECT_EQ(verdict.places[0].frame, "train.py:31 in main");
  // The culprit's line names where to find it: host, local rank, GPU, last step, frame.
  RankStacks culprit = Stacks(2, "node1", Sleeping());
  culprit.local_rank = 0;
  culprit.gpu = "GPU 4 (0000:9a:00.0)";
  culprit.last_step = 41;
  verdict = JudgeHang({Stacks(0, "node0", InAllReduce()), culprit});
  ASSERT_EQ(verdict.details.size(), 1u);
  EXPECT_EQ(verdict.details[0],
            "rank 2: host node1, local rank 0, GPU 4 (0000:9a:00.0), last step 41, at train.py:20 in wait_for_peer");
}

TEST(HangCulpritTest, DifferentCollectivesNameTheOddOneOut) {
  std::string barrier = InAllReduce();
  barrier.replace(barrier.find("in all_reduce"), 13, "in barrier");
  HangVerdict verdict = JudgeHang({Stacks(0, "", InAllReduce()), Stacks(1, "", barrier), Stacks(2, "", InAllReduce())});
  EXPECT_EQ(verdict.culprits, std::vector<int>{1});
  EXPECT_NE(verdict.summary.find("different collectives: all_reduce (ranks 0, 2), barrier (rank 1)"), std::string::npos)
      << verdict.summary;
}

TEST(HangCulpritTest, NothingSinglesOneOutAndSaysSo) {
  HangVerdict same = JudgeHang({Stacks(0, "", InAllReduce()), Stacks(1, "", InAllReduce())});
  EXPECT_TRUE(same.culprits.empty());
  EXPECT_NE(same.summary.find("every rank is inside all_reduce"), std::string::npos);
  HangVerdict none = JudgeHang({Stacks(0, "", Sleeping()), Stacks(1, "", "no stack tool found")});
  EXPECT_TRUE(none.culprits.empty());
  EXPECT_EQ(none.summary, "no rank is inside a collective: the stacks do not name one the others wait for; no stack "
                          "from rank 1");
}

// py-spy's text: "function (file:line)" under "Thread N (...): \"MainThread\"".
TEST(HangCulpritTest, PySpyStacksAreReadToo) {
  std::string spy = "Process 123: python3 train.py\nThread 123 (idle): \"MainThread\"\n"
                    "    all_reduce (torch/distributed/distributed_c10d.py:1436)\n    main (train.py:31)\n";
  std::string stuck = "Thread 124 (idle): \"MainThread\"\n    load_batch (data.py:88)\n    main (train.py:29)\n";
  HangVerdict verdict = JudgeHang({Stacks(0, "", spy), Stacks(1, "", stuck)});
  EXPECT_EQ(verdict.culprits, std::vector<int>{1});
  EXPECT_NE(verdict.summary.find("rank 1 is at data.py:88 in load_batch"), std::string::npos) << verdict.summary;
}

}  // namespace
}  // namespace primus::analyze
