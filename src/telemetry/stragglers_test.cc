#include "telemetry/stragglers.h"

#include <gtest/gtest.h>

namespace primus::telemetry {
namespace {

std::vector<RankTiming> Ranks(int64_t step, double slow_time, int64_t slow_step = -1) {
  return {{0, 0, step, 0.40}, {1, 0, step, 0.42}, {2, 1, step, 0.41}, {3, 1, slow_step < 0 ? step : slow_step, slow_time}};
}

TEST(StragglerTest, APersistentSlowRankIsNamedAfterThreeSamples) {
  StragglerWatch watch;
  watch.Observe(Ranks(10, 0.61), {});
  watch.Observe(Ranks(11, 0.62), {});
  EXPECT_TRUE(watch.ranks().empty());
  watch.Observe(Ranks(12, 0.61), {});
  ASSERT_EQ(watch.ranks().size(), 1u);
  EXPECT_EQ(watch.ranks()[0].rank, 3);
  EXPECT_EQ(watch.ranks()[0].node_rank, 1);
  EXPECT_EQ(watch.ranks()[0].samples, 3);
  EXPECT_NEAR(watch.ranks()[0].median_step_time_s, 0.415, 1e-9);
  EXPECT_NEAR(watch.ranks()[0].ratio, 1.47, 1e-9);
}

TEST(StragglerTest, AOneOffSlowSampleNamesNobody) {
  StragglerWatch watch;
  watch.Observe(Ranks(10, 0.61), {});
  watch.Observe(Ranks(11, 0.61), {});
  watch.Observe(Ranks(12, 0.43), {});  // back to normal
  watch.Observe(Ranks(13, 0.61), {});
  watch.Observe(Ranks(14, 0.61), {});
  EXPECT_TRUE(watch.ranks().empty());
}

TEST(StragglerTest, SamplesWithoutNewStepsDoNotCount) {
  StragglerWatch watch;
  watch.Observe(Ranks(10, 0.61), {});
  watch.Observe(Ranks(11, 0.61, 10), {});  // rank 3 still at step 10
  watch.Observe(Ranks(12, 0.61, 10), {});
  EXPECT_TRUE(watch.ranks().empty());
  watch.Observe(Ranks(13, 0.61, 11), {});
  watch.Observe(Ranks(14, 0.61, 12), {});
  EXPECT_EQ(watch.ranks().size(), 1u);
}

TEST(StragglerTest, OneRankHasNothingToCompareWith) {
  StragglerWatch watch;
  for (int step = 0; step < 5; ++step) watch.Observe({{0, 0, step, 9.0}}, {{0, 0, 5}});
  EXPECT_TRUE(watch.ranks().empty());
  EXPECT_TRUE(watch.gpus().empty());
}

TEST(StragglerTest, AGpuTwentyPointsUnderTheMedianThreeTimesIsNamed) {
  StragglerWatch watch;
  std::vector<GpuUtilization> gpus = {{0, 0, 97}, {0, 1, 95}, {1, 0, 96}, {1, 2, 76}};  // median 95.5: 76 is 19.5 under
  for (int i = 0; i < 4; ++i) watch.Observe({}, gpus);
  EXPECT_TRUE(watch.gpus().empty());
  gpus[3].utilization_percent = 41;
  watch.Observe({}, gpus);
  watch.Observe({}, gpus);
  EXPECT_TRUE(watch.gpus().empty());
  watch.Observe({}, gpus);
  ASSERT_EQ(watch.gpus().size(), 1u);
  EXPECT_EQ(watch.gpus()[0].node_rank, 1);
  EXPECT_EQ(watch.gpus()[0].gpu, 2);
  EXPECT_EQ(watch.gpus()[0].utilization_percent, 41);
  EXPECT_EQ(watch.gpus()[0].median_utilization_percent, 96);  // 95.5 rounded
  EXPECT_EQ(watch.gpus()[0].samples, 3);
  gpus[3].utilization_percent = 94;
  watch.Observe({}, gpus);
  EXPECT_TRUE(watch.gpus().empty());
}

TEST(StragglerTest, Median) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 2, 3}), 2.5);
}

}  // namespace
}  // namespace primus::telemetry
