#include "telemetry/step_time_parts.h"

#include <gtest/gtest.h>

namespace primus::telemetry {
namespace {

StepTimePart P(std::string name, double seconds, std::optional<double> fastest = std::nullopt,
               std::optional<int> slowest_rank = std::nullopt) {
  return StepTimePart{std::move(name), seconds, fastest, slowest_rank};
}

TrainingMetrics WithParts(std::vector<StepTimePart> parts, std::optional<double> step_time = std::nullopt) {
  TrainingMetrics metrics;
  metrics.step = 10;
  metrics.step_time_s = step_time;
  metrics.time_parts = std::move(parts);
  return metrics;
}

TEST(StepTimePartsTest, OwnPhasesAreTakenAsTheyAre) {
  auto parts = BreakDownStepTime(WithParts({P("compute", 0.5), P("communication", 0.2), P("data", 0.1)}));
  ASSERT_TRUE(parts);
  EXPECT_DOUBLE_EQ(parts->at(StepPhase::kCompute), 0.5);
  EXPECT_DOUBLE_EQ(parts->at(StepPhase::kCommunication), 0.2);
  EXPECT_DOUBLE_EQ(parts->at(StepPhase::kData), 0.1);
  EXPECT_DOUBLE_EQ(parts->total(), 0.8);
  EXPECT_FALSE(parts->job_wide);
}

TEST(StepTimePartsTest, MegatronTimersAreUnnestedIntoPhasesThatAddUp) {
  // forward-backward holds batch-generator and the gradient reduction;
  // optimizer holds params-all-gather; forward-compute is inside
  // forward-backward and not counted twice.
  auto parts = BreakDownStepTime(WithParts({P("forward-backward", 0.8),
                                            P("forward-compute", 0.3),
                                            P("batch-generator", 0.05),
                                            P("all-grads-sync", 0.1),
                                            P("forward-recv", 0.05),
                                            P("params-all-gather", 0.02),
                                            P("optimizer", 0.1),
                                            P("optimizer-inner-step", 0.07)},
                                           /*step_time=*/1.0));
  ASSERT_TRUE(parts);
  EXPECT_DOUBLE_EQ(parts->at(StepPhase::kData), 0.05);
  EXPECT_NEAR(parts->at(StepPhase::kCommunication), 0.17, 1e-12);
  EXPECT_NEAR(parts->at(StepPhase::kCompute), 0.6, 1e-12);
  EXPECT_NEAR(parts->at(StepPhase::kOptimizer), 0.08, 1e-12);
  EXPECT_NEAR(parts->at(StepPhase::kOther), 0.1, 1e-12);
  EXPECT_NEAR(parts->total(), 1.0, 1e-12);
  EXPECT_TRUE(parts->job_wide);
  EXPECT_TRUE(parts->unplaced.empty());
}

TEST(StepTimePartsTest, SlowestRankComesFromTheLargestPartAndUnknownNamesAreNotStacked) {
  auto parts = BreakDownStepTime(WithParts({P("forward-backward", 0.9, 0.8, 3), P("optimizer", 0.1, 0.1, 1),
                                            P("my-custom-timer", 5.0)}));
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->slowest_rank, 3);
  EXPECT_EQ(parts->unplaced, std::vector<std::string>{"my-custom-timer"});
  EXPECT_NEAR(parts->total(), 1.0, 1e-12);
  // Nested figures from different ranks never make a phase negative.
  parts = BreakDownStepTime(WithParts({P("forward-backward", 0.1), P("all-grads-sync", 0.3)}, 0.2));
  ASSERT_TRUE(parts);
  EXPECT_DOUBLE_EQ(parts->at(StepPhase::kCompute), 0);
  EXPECT_DOUBLE_EQ(parts->at(StepPhase::kOther), 0.1);
}

TEST(StepTimePartsTest, NothingKnownIsNoBreakdown) {
  EXPECT_FALSE(BreakDownStepTime(WithParts({})));
  EXPECT_FALSE(BreakDownStepTime(WithParts({P("something", 1.0)})));
}

}  // namespace
}  // namespace primus::telemetry
