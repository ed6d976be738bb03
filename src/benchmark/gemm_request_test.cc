#include "benchmark/gemm_request.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(GemmRequestTest, DefaultsDependOnTheDevice) {
  auto request = ParseGemmRequest({});
  ASSERT_TRUE(request.ok());
  GemmPlan gpu = PlanGemm(*request, true);
  ASSERT_EQ(gpu.shapes.size(), 1u);
  EXPECT_EQ(gpu.shapes[0].m, 8192);
  EXPECT_EQ(gpu.shapes[0].k, 8192);
  EXPECT_EQ(gpu.iters, 100);
  EXPECT_EQ(gpu.warmup, 20);
  EXPECT_EQ(gpu.dtype, GemmDtype::kBf16);
  GemmPlan cpu = PlanGemm(*request, false);
  EXPECT_EQ(cpu.shapes[0].m, 1024);
  EXPECT_EQ(cpu.iters, 10);
}

TEST(GemmRequestTest, NAndKDefaultToM) {
  auto request = ParseGemmRequest({"-M", "4096", "--K", "1024", "--trans-a", "--dtype", "fp8"});
  ASSERT_TRUE(request.ok()) << request.error().message;
  GemmPlan plan = PlanGemm(*request, true);
  EXPECT_EQ(plan.shapes[0].m, 4096);
  EXPECT_EQ(plan.shapes[0].n, 4096);
  EXPECT_EQ(plan.shapes[0].k, 1024);
  EXPECT_TRUE(plan.shapes[0].trans_a);
  EXPECT_FALSE(plan.shapes[0].trans_b);
  EXPECT_EQ(plan.dtype, GemmDtype::kFp8);
}

TEST(GemmRequestTest, SweepAndDuration) {
  auto request = ParseGemmRequest({"--sweep", "-M", "1024", "--duration", "2.5"});
  ASSERT_TRUE(request.ok());
  GemmPlan plan = PlanGemm(*request, true);
  ASSERT_EQ(plan.shapes.size(), 3u);
  EXPECT_EQ(plan.shapes[2].n, 1024);
  EXPECT_EQ(plan.iters, 0);
  EXPECT_DOUBLE_EQ(plan.duration_s, 2.5);
}

TEST(GemmRequestTest, BadInputNamesTheFlag) {
  auto dtype = ParseGemmRequest({"--dtype", "bf61"});
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.error().code, ExitCode::kUsage);
  EXPECT_NE(dtype.error().message.find("did you mean 'bf16'"), std::string::npos) << dtype.error().message;
  auto size = ParseGemmRequest({"-M", "0"});
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().message.find("-M"), std::string::npos);
  EXPECT_FALSE(ParseGemmRequest({"--iters", "5", "--duration", "1"}).ok());
  EXPECT_FALSE(ParseGemmRequest({"--sweep", "-N", "128"}).ok());
  auto plot = ParseGemmRequest({"--plot", "out.png"});
  ASSERT_FALSE(plot.ok());
  EXPECT_NE(plot.error().message.find("SVG"), std::string::npos);
  EXPECT_FALSE(ParseGemmRequest({"--bogus"}).ok());
  EXPECT_FALSE(ParseGemmRequest({"--device", "tpu"}).ok());
  EXPECT_FALSE(ParseGemmRequest({"stray"}).ok());
}

}  // namespace
}  // namespace primus::benchmark
