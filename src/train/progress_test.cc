#include "train/progress.h"

#include <gtest/gtest.h>

namespace primus::train {
namespace {

TEST(ProgressTest, ParsesTrainerMetricsLines) {
  ProgressSnapshot s;
  ASSERT_TRUE(ParseMetricsLine(R"({"step": 20, "loss": 2.5, "lr": 0.001, "tokens_per_s": 12000.5, "elapsed_s": 10.0})", &s));
  EXPECT_EQ(s.step, 20);
  EXPECT_DOUBLE_EQ(s.loss, 2.5);
  EXPECT_FALSE(ParseMetricsLine("step 20/200 loss 2.5", &s));
  EXPECT_FALSE(ParseMetricsLine(R"({"event": "resume"})", &s));
  // A worker's odd line never ends the launcher: null or wrong types keep the last value.
  ASSERT_TRUE(ParseMetricsLine(R"({"step": 21, "loss": null, "tokens_per_s": "fast"})", &s));
  EXPECT_EQ(s.step, 21);
  EXPECT_DOUBLE_EQ(s.loss, 2.5);
  EXPECT_FALSE(ParseMetricsLine(R"({"step": "22", "loss": 1.0})", &s));
  EXPECT_FALSE(ParseMetricsLine(std::string(100000, '[') + std::string(100000, ']'), &s));
  EXPECT_EQ(s.step, 21);
}

TEST(ProgressTest, FormatsStepLossThroughputAndEta) {
  ProgressSnapshot s{50, 1.23456, 8000, 25.0};
  EXPECT_EQ(FormatProgress(s, 200), "step 50/200 (25%)  loss 1.2346  8000 tok/s  ETA 1:15");
}

TEST(ProgressTest, AJobViewGivesTheProgressOfAFrameworkThatPrintsIt) {
  // What node 0 writes for a Megatron-LM job whose last rank printed step 40 of 100.
  ProgressSnapshot s;
  ASSERT_TRUE(ReadJobViewProgress(R"({"job": {"step": 40, "total_steps": 100, "loss": 3.5, "tokens_per_s": 1200,
                                              "eta_s": 75}, "nodes": []})",
                                  &s));
  EXPECT_EQ(FormatProgress(s, 0), "step 40/100 (40%)  loss 3.5000  1200 tok/s  ETA 1:15");
  EXPECT_FALSE(ReadJobViewProgress(R"({"job": {"state": "starting"}})", &s)) << "no step yet";
  EXPECT_FALSE(ReadJobViewProgress("not json", &s));
  EXPECT_EQ(s.step, 40) << "a view without a step keeps the last figures";
}

}  // namespace
}  // namespace primus::train
