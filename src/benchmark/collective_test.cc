#include "benchmark/collective.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(CollectiveTest, NamesAndParsing) {
  EXPECT_EQ(ParseCollective("all_reduce"), Collective::kAllReduce);
  EXPECT_EQ(ParseCollective("AllGather"), Collective::kAllGather);
  EXPECT_EQ(ParseCollective("reduce-scatter"), Collective::kReduceScatter);
  EXPECT_EQ(ParseCollective("alltoall_perf"), Collective::kAlltoAll);
  EXPECT_EQ(ParseCollective("sendrecv"), Collective::kSendRecv);
  EXPECT_FALSE(ParseCollective("reduce"));
  EXPECT_EQ(ProgramName(Collective::kAllReduce), "all_reduce_perf");
  EXPECT_EQ(RedopName(Collective::kAllGather), "none");
  EXPECT_EQ(RedopName(Collective::kSendRecv), "sum");
}

// nccl-tests' *GetCollByteCount for 4 ranks and 1000 elements.
TEST(CollectiveTest, CountsFollowNcclTests) {
  CollectiveCounts ar = CountsFor(Collective::kAllReduce, 1000, 4);
  EXPECT_EQ(ar.send_count, 1000u);
  EXPECT_EQ(ar.param_count, 1000u);
  CollectiveCounts ag = CountsFor(Collective::kAllGather, 1000, 4);
  EXPECT_EQ(ag.send_count, 250u);
  EXPECT_EQ(ag.recv_count, 1000u);
  EXPECT_EQ(ag.param_count, 250u);
  EXPECT_EQ(ag.send_inplace_offset, 250u);
  CollectiveCounts rs = CountsFor(Collective::kReduceScatter, 1001, 4);
  EXPECT_EQ(rs.send_count, 1000u);
  EXPECT_EQ(rs.recv_count, 250u);
  EXPECT_EQ(rs.recv_inplace_offset, 250u);
  CollectiveCounts a2a = CountsFor(Collective::kAlltoAll, 1002, 4);
  EXPECT_EQ(a2a.send_count, 1000u);
  EXPECT_EQ(a2a.recv_count, 1000u);
  EXPECT_EQ(a2a.param_count, 250u);
}

TEST(CollectiveTest, BusBandwidthFactors) {
  // 1 GB in 1 s among 8 ranks.
  Bandwidth ar = BandwidthFor(Collective::kAllReduce, 250'000'000, 4, 1.0, 8);
  EXPECT_DOUBLE_EQ(ar.algbw, 1.0);
  EXPECT_DOUBLE_EQ(ar.busbw, 1.75);
  Bandwidth ag = BandwidthFor(Collective::kAllGather, 31'250'000, 4, 1.0, 8);  // per-rank count
  EXPECT_DOUBLE_EQ(ag.algbw, 1.0);
  EXPECT_DOUBLE_EQ(ag.busbw, 0.875);
  EXPECT_DOUBLE_EQ(BandwidthFor(Collective::kReduceScatter, 31'250'000, 4, 1.0, 8).busbw, 0.875);
  EXPECT_DOUBLE_EQ(BandwidthFor(Collective::kAlltoAll, 31'250'000, 4, 1.0, 8).busbw, 0.875);
  EXPECT_DOUBLE_EQ(BandwidthFor(Collective::kBroadcast, 250'000'000, 4, 1.0, 8).busbw, 1.0);
  EXPECT_DOUBLE_EQ(BandwidthFor(Collective::kSendRecv, 250'000'000, 4, 1.0, 8).busbw, 1.0);
  EXPECT_DOUBLE_EQ(BandwidthFor(Collective::kAllReduce, 10, 4, 0, 8).busbw, 0) << "no time, no rate";
}

}  // namespace
}  // namespace primus::benchmark
