#include "benchmark/comm_request.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(CommRequestTest, NcclTestsDefaults) {
  auto request = ParseCommRequest({});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->min_bytes, 32u << 20);
  EXPECT_EQ(request->max_bytes, 32u << 20);
  EXPECT_EQ(request->iters, 20);
  EXPECT_EQ(request->warmup, 5);
  EXPECT_EQ(request->check, 1);
  EXPECT_EQ(request->type, DataType::kFloat);
  EXPECT_EQ(request->ops, std::vector<Collective>{Collective::kAllReduce});
  EXPECT_EQ(RowSizes(*request), std::vector<size_t>{32u << 20});
}

TEST(CommRequestTest, UsualSweep) {
  auto request = ParseCommRequest({"-b", "8", "-e", "128M", "-f", "2", "--op", "all", "-d", "bf16", "-c", "0", "-n5"});
  ASSERT_TRUE(request.ok()) << request.error().message;
  std::vector<size_t> sizes = RowSizes(*request);
  ASSERT_EQ(sizes.size(), 25u);
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes.back(), 128u << 20);
  EXPECT_EQ(request->ops.size(), 6u);
  EXPECT_EQ(request->type, DataType::kBfloat16);
  EXPECT_EQ(request->check, 0);
  EXPECT_EQ(request->iters, 5);
}

TEST(CommRequestTest, StepBytesAndSizeSyntax) {
  EXPECT_EQ(ParseByteSize("1K"), 1024u);
  EXPECT_EQ(ParseByteSize("1.5M"), 1536u * 1024);
  EXPECT_EQ(ParseByteSize("2g"), size_t{2} << 30);
  EXPECT_EQ(ParseByteSize("100"), 100u);
  EXPECT_FALSE(ParseByteSize("12Q"));
  EXPECT_FALSE(ParseByteSize("-1"));
  auto request = ParseCommRequest({"-b", "1M", "-e", "3M", "-i", "1M"});
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(RowSizes(*request), (std::vector<size_t>{1u << 20, 2u << 20, 3u << 20}));
}

TEST(CommRequestTest, BadInputNamesTheFlag) {
  auto op = ParseCommRequest({"--op", "allreduse"});
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.error().message.find("did you mean 'allreduce'"), std::string::npos) << op.error().message;
  auto order = ParseCommRequest({"-b", "1M", "-e", "1K"});
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.error().message.find("-b"), std::string::npos);
  EXPECT_FALSE(ParseCommRequest({"-d", "float128"}).ok());
  EXPECT_FALSE(ParseCommRequest({"-n", "0"}).ok());
  EXPECT_FALSE(ParseCommRequest({"-e", "lots"}).ok());
  EXPECT_FALSE(ParseCommRequest({"--plot", "busbw.png"}).ok());
  EXPECT_FALSE(ParseCommRequest({"-b", "1K", "-e", "2K", "-i", "0"}).ok());
}

TEST(CommRequestTest, SizeListAndSeveralOps) {
  auto request = ParseCommRequest({"--sizes", "1K,64M,1.5M", "--op", "all_reduce,allgather,allreduce"});
  ASSERT_TRUE(request.ok()) << request.error().Format();
  EXPECT_EQ(RowSizes(*request), (std::vector<size_t>{1024, 64u << 20, 1536u * 1024})) << "in the order given";
  EXPECT_EQ(request->ops, (std::vector<Collective>{Collective::kAllReduce, Collective::kAllGather}));
  auto both = ParseCommRequest({"--sizes", "1K", "-e", "1M"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("-e cannot be given with it"), std::string::npos) << both.error().message;
  auto bad = ParseCommRequest({"--sizes", "1K,lots"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'lots' is not a size"), std::string::npos);
  auto op = ParseCommRequest({"--op", "allreduce,allgathr"});
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.error().message.find("did you mean 'allgather'"), std::string::npos) << op.error().message;
}

// One spelling per concept across the benchmark family: gemm's and rccl's
// --dtype, --warmup, --iters, --min-bytes; nccl-tests' short flags and names stay.
TEST(CommRequestTest, TheFamilysSpellingsAndNcclTestsOnesMeanTheSame) {
  auto canonical = ParseCommRequest({"--dtype", "bf16", "--warmup", "3", "--iters", "7", "--min-bytes", "1K",
                                     "--max-bytes", "4K", "--step-factor", "2"});
  auto nccl_tests = ParseCommRequest({"-d", "bfloat16", "-w", "3", "-n", "7", "-b", "1K", "-e", "4K", "-f", "2"});
  ASSERT_TRUE(canonical.ok()) << canonical.error().message;
  ASSERT_TRUE(nccl_tests.ok()) << nccl_tests.error().message;
  EXPECT_EQ(canonical->type, DataType::kBfloat16);
  EXPECT_EQ(nccl_tests->type, DataType::kBfloat16);
  EXPECT_EQ(canonical->warmup, nccl_tests->warmup);
  EXPECT_EQ(canonical->iters, nccl_tests->iters);
  EXPECT_EQ(RowSizes(*canonical), RowSizes(*nccl_tests));
  EXPECT_EQ(RowSizes(*canonical), (std::vector<size_t>{1024, 2048, 4096}));
}

}  // namespace
}  // namespace primus::benchmark
