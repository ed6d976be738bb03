#include "benchmark/gemm_problem.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(GemmProblemTest, FlopsBytesAndIntensity) {
  GemmShape shape{8192, 8192, 8192, false, false};
  EXPECT_DOUBLE_EQ(GemmFlops(shape), 2.0 * 8192 * 8192 * 8192);
  EXPECT_EQ(GemmMinimumBytes(shape, GemmDtype::kBf16, GemmDtype::kBf16), int64_t{3} * 8192 * 8192 * 2);
  EXPECT_NEAR(ArithmeticIntensity(shape, GemmDtype::kBf16, GemmDtype::kBf16), 2730.67, 0.01);
  EXPECT_NEAR(Tflops(shape, 1.1e-3), 999.5, 0.1);
  EXPECT_DOUBLE_EQ(BandwidthGBs(2'000'000'000, 2.0), 1.0);
  // fp8: one byte in, bf16 out.
  EXPECT_EQ(GemmMinimumBytes({4, 4, 4}, GemmDtype::kFp8, GemmDtype::kFp8), 16 + 16 + 32);
}

TEST(GemmProblemTest, StorageFollowsTransposes) {
  GemmShape shape{10, 20, 30, true, false};
  EXPECT_EQ(RowsOfA(shape), 30);
  EXPECT_EQ(ColsOfA(shape), 10);
  EXPECT_EQ(RowsOfB(shape), 30);
  EXPECT_EQ(ColsOfB(shape), 20);
  EXPECT_EQ(shape.Describe(), "10x20x30 TN");
}

TEST(GemmProblemTest, RotationCoversTwiceTheCacheWithAtLeastTwoSets) {
  EXPECT_EQ(RotationSets(100, 1000, 1 << 20), 20);  // 2 x 1000 bytes of cache
  EXPECT_EQ(RotationSets(10'000, 1000, 1 << 20), 2);  // large sets: still two, never the same twice in a row
  EXPECT_EQ(RotationSets(100, 1000, 500), 5);         // limited by memory
  EXPECT_EQ(RotationSets(1000, 1000, 1500), 1);       // two do not fit: the caller reports it
}

TEST(GemmProblemTest, IterationsReallyRotateThroughTheSets) {
  BufferRotation rotation(3);
  std::vector<int> order;
  for (int i = 0; i < 7; ++i) order.push_back(rotation.Next());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
  rotation.Restart();
  EXPECT_EQ(rotation.Next(), 0);
  BufferRotation two(2);
  int previous = two.Next();
  for (int i = 0; i < 10; ++i) {
    int set = two.Next();
    EXPECT_NE(set, previous) << "consecutive iterations must not share a set";
    previous = set;
  }
}

TEST(GemmProblemTest, SweepSizes) {
  EXPECT_EQ(SweepSizes(8192), (std::vector<int64_t>{256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(SweepSizes(1000), (std::vector<int64_t>{256, 512, 1000}));
  EXPECT_EQ(SweepSizes(100), (std::vector<int64_t>{64, 100}));
}

TEST(GemmProblemTest, DtypeNames) {
  EXPECT_EQ(ParseGemmDtype("bfloat16"), GemmDtype::kBf16);
  EXPECT_EQ(ParseGemmDtype("FP8"), GemmDtype::kFp8);
  EXPECT_FALSE(ParseGemmDtype("fp64"));
  for (const std::string& name : GemmDtypeNames()) EXPECT_EQ(GemmDtypeName(*ParseGemmDtype(name)), name);
}

}  // namespace
}  // namespace primus::benchmark
