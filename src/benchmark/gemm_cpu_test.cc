// Real OpenBLAS (Debian's libopenblas0-pthread, installed by scripts/setup.sh).
#include "benchmark/gemm_cpu.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::benchmark {
namespace {

TEST(GemmCpuTest, SmallProductsAreCorrectInEveryLayout) {
  auto engine = OpenCpuGemmEngine("test cpu");
  ASSERT_TRUE(engine.ok()) << engine.error().Format();
  GemmRunOptions settings{3, 0, 1, false, 1};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      GemmShape shape{48, 40, 56, ta, tb};
      auto result = (*engine)->Run(shape, GemmDtype::kFp32, settings);
      ASSERT_TRUE(result.ok()) << result.error().Format();
      EXPECT_TRUE(result->check.passed) << shape.Describe() << ": " << result->check.first_wrong;
      EXPECT_EQ(result->check.mode, "full");
      EXPECT_EQ(result->timing.iterations, 3);
      EXPECT_GT(result->tflops, 0);
      EXPECT_GE(result->rotation_sets, 2) << "consecutive iterations must not share buffers";
      EXPECT_EQ(result->dtype_used, "fp32");
      EXPECT_TRUE(result->note.empty());
    }
  }
}

TEST(GemmCpuTest, SaysWhichDtypeItReallyUsed) {
  auto engine = OpenCpuGemmEngine("test cpu");
  ASSERT_TRUE(engine.ok());
  auto result = (*engine)->Run({32, 32, 32}, GemmDtype::kBf16, {2, 0, 0, false, 1});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->dtype_requested, "bf16");
  EXPECT_EQ(result->dtype_used, "fp32");
  EXPECT_NE(result->note.find("computes fp32"), std::string::npos) << result->note;
  EXPECT_NE(result->library.find("OpenBLAS"), std::string::npos) << result->library;
  EXPECT_EQ(result->peak_tflops, 0) << "no CPU peak is claimed";
}

TEST(GemmCpuTest, DurationBoxesTheIterations) {
  auto engine = OpenCpuGemmEngine("test cpu");
  ASSERT_TRUE(engine.ok());
  auto result = (*engine)->Run({64, 64, 64}, GemmDtype::kFp32, {0, 0.05, 2, false, 1});
  ASSERT_TRUE(result.ok());
  EXPECT_GE(result->timing.iterations, 1);
  EXPECT_LT(result->timing.mean_ms * result->timing.iterations, 500);
}

TEST(GemmCpuTest, LastLevelCacheFromSysfs) {
  ScopedTempDir dir("llc");
  for (auto [index, level, size] : {std::tuple{0, "1", "32K"}, {2, "2", "1024K"}, {3, "3", "16384K"}}) {
    std::string base = dir.path() + "/cpu0/cache/index" + std::to_string(index);
    ASSERT_TRUE(MakeDirs(base).ok());
    ASSERT_TRUE(WriteFileAtomic(base + "/level", std::string(level) + "\n").ok());
    ASSERT_TRUE(WriteFileAtomic(base + "/size", std::string(size) + "\n").ok());
  }
  EXPECT_EQ(LastLevelCacheBytes(dir.path()), int64_t{16} << 20);
  EXPECT_EQ(LastLevelCacheBytes(dir.path() + "/missing"), int64_t{32} << 20) << "a guess when unreadable";
}

TEST(GemmCpuTest, IterationsForADuration) {
  EXPECT_EQ(IterationsFor(1.0, 0.1), 10);
  EXPECT_EQ(IterationsFor(0.01, 1.0), 1);
  EXPECT_EQ(IterationsFor(1.0, 0), 1);
}

}  // namespace
}  // namespace primus::benchmark
