#include "analyze/run_summary.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::analyze {
namespace {

void Write(const std::string& path, const std::string& text) {
  ASSERT_TRUE(MakeDirs(DirName(path)).ok());
  ASSERT_TRUE(WriteFileAtomic(path, text).ok());
}

const char* kMetadata =
    R"({"task": "train pretrain", "start_time": "2026-11-24T09:00:00Z", "end_time": "2026-11-24T09:01:40Z",
        "status": "failed", "exit_code": 137, "restarts": 1,
        "root_cause": {"host": "node1", "rank": 1, "exit_code": 137, "signal": 9, "hung": false, "message": ""}})";

// Steps 1-3, a restart back to step 2, then 3-4: forward progress is 4
// steps in 4 s; the redone step is not counted twice.
TEST(RunSummaryTest, MetricsGiveRatesLossAndProgressAcrossARestart) {
  ScopedTempDir dir("run");
  Write(JoinPath(dir.path(), "metadata.json"), kMetadata);
  Write(JoinPath(dir.path(), "metrics.jsonl"),
        R"({"step": 1, "loss": 5.0, "tokens_per_s": 100, "time": 1000.0})" "\n"
        R"({"step": 2, "loss": 4.0, "tokens_per_s": 200, "time": 1001.0})" "\n"
        R"({"step": 3, "loss": 3.5, "tokens_per_s": 300, "time": 1002.0})" "\n"
        "not json\n"
        R"({"step": 2, "loss": 4.1, "tokens_per_s": 100, "time": 1010.0})" "\n"
        R"({"step": 3, "loss": 3.4, "tokens_per_s": 200, "time": 1011.0})" "\n"
        R"({"step": 4, "loss": 3.0, "tokens_per_s": 400, "time": 1012.0})" "\n");
  auto summary = LoadRunSummary(dir.path());
  ASSERT_TRUE(summary.ok()) << summary.error().Format();
  EXPECT_EQ(summary->duration_s, 100);
  EXPECT_EQ(summary->restarts, 1);
  EXPECT_EQ(summary->points.size(), 6u);
  EXPECT_DOUBLE_EQ(summary->steps_per_s, 1.0);
  EXPECT_DOUBLE_EQ(summary->tokens_per_s, 1300.0 / 6);
  EXPECT_EQ(summary->loss_first, 5.0);
  EXPECT_EQ(summary->loss_last, 3.0);
  EXPECT_EQ(summary->loss_min, 3.0);
  EXPECT_EQ(summary->step_last, 4);
  std::string text = FormatRunSummary(*summary);
  EXPECT_NE(text.find("status:     failed (exit 137)"), std::string::npos) << text;
  EXPECT_NE(text.find("root cause: rank 1 on node1 (signal 9)"), std::string::npos) << text;
  EXPECT_NE(text.find("loss:       5 -> 3 (min 3)"), std::string::npos) << text;
  std::string svg = RenderRunPlot(*summary);
  EXPECT_NE(svg.find(">loss</text>"), std::string::npos);
  EXPECT_NE(svg.find(">tokens/s</text>"), std::string::npos);
}

TEST(RunSummaryTest, WithoutMetricsRankZerosLogLinesAreRead) {
  ScopedTempDir dir("run");
  Write(JoinPath(dir.path(), "metadata.json"), R"({"status": "succeeded", "exit_code": 0, "restarts": 0})");
  Write(JoinPath(dir.path(), "logs/attempt_0/vm.rank0.log"),
        "2026-11-24T10:00:00.000000 O step 10/100 loss 4.5 lr 1e-3 tok/s 1000\n"
        "2026-11-24T10:00:02.000000 O step 20/100 loss 3.5 lr 1e-3 tok/s 3000\n");
  Write(JoinPath(dir.path(), "logs/attempt_0/vm.rank1.log"), "2026-11-24T10:00:00.000000 O step 10/100 loss 9.9\n");
  auto summary = LoadRunSummary(dir.path());
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->points.size(), 2u);
  EXPECT_EQ(summary->metrics_source, "logs/attempt_0/vm.rank0.log");
  EXPECT_DOUBLE_EQ(summary->steps_per_s, 5.0);
  EXPECT_DOUBLE_EQ(summary->tokens_per_s, 2000.0);
}

TEST(RunSummaryTest, NoMetadataIsUnavailable) {
  ScopedTempDir dir("run");
  auto summary = LoadRunSummary(dir.path());
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.error().code, ExitCode::kUnavailable);
  EXPECT_NE(summary.error().message.find("metadata.json"), std::string::npos);
}

}  // namespace
}  // namespace primus::analyze
