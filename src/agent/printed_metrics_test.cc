#include "agent/printed_metrics.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "telemetry/node_sample.h"
#include "util/files.h"
#include "util/private_files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

const char kTitanLine[] = "[titan] 2026-11-27 12:00:00,123 - root - INFO - \x1b[31mstep:  3  \x1b[32mloss:  7.50000  "
                          "\x1b[34mtps: 12,346  \x1b[35mmfu: 45.68%\x1b[39m";

class PrintedMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/rank3.metrics.jsonl";
    auto fd = CreatePrivateFile(path_);
    ASSERT_TRUE(fd.ok());
    ::close(*fd);
  }
  PrintedMetrics Make(telemetry::ProgressFormat format) {
    auto reader = telemetry::ProgressLineReader::Create(format);
    EXPECT_TRUE(reader.ok());
    return PrintedMetrics(std::move(*reader), path_, 2);
  }
  std::vector<std::string> Lines() {
    auto text = ReadFile(path_);
    std::vector<std::string> lines = Split(text.ok() ? *text : "", '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    return lines;
  }
  ScopedTempDir dir_{"printed-metrics"};
  std::string path_;
};

TEST_F(PrintedMetricsTest, ProgressLinesBecomeMetricsLinesTheReadersParse) {
  PrintedMetrics printed = Make(telemetry::ProgressFormat::kAuto);
  printed.OnLine("loading data");
  printed.OnLine(kTitanLine);
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  auto metrics = telemetry::ParseMetricsLine(lines[0]);
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->step, 3);
  EXPECT_DOUBLE_EQ(*metrics->loss, 7.5);
  EXPECT_DOUBLE_EQ(*metrics->tokens_per_s, 12346);
  EXPECT_EQ(metrics->restart_count, 2);
  EXPECT_TRUE(metrics->time.has_value());
  EXPECT_FALSE(metrics->step_time_s.has_value()) << "one line gives no interval";
  EXPECT_EQ(printed.records(), 1);
}

TEST_F(PrintedMetricsTest, AStepTimeComesFromTheIntervalWhenTheLineHasNone) {
  PrintedMetrics printed = Make(telemetry::ProgressFormat::kNanoGpt);
  printed.OnLine("iter 10: loss 4.0, mfu 1.00%");
  usleep(100 * 1000);
  printed.OnLine("iter 12: loss 3.9, mfu 1.00%");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  auto second = telemetry::ParseMetricsLine(lines[1]);
  ASSERT_TRUE(second && second->step_time_s);
  EXPECT_GT(*second->step_time_s, 0.04);  // 0.1 s over two steps
  EXPECT_LT(*second->step_time_s, 5.0);
}

TEST_F(PrintedMetricsTest, AWorkerThatWritesItsMetricsFileWins) {
  PrintedMetrics printed = Make(telemetry::ProgressFormat::kPrimus);
  printed.OnLine("step 1/10 loss 5.0 lr 1e-3 tok/s 100");
  {
    // The worker's own line, as train.py appends to PRIMUS_METRICS_FILE.
    FILE* file = std::fopen(path_.c_str(), "a");
    ASSERT_NE(file, nullptr);
    std::fputs("{\"step\": 1, \"loss\": 4.99, \"mine\": true}\n", file);
    std::fclose(file);
  }
  printed.OnLine("step 2/10 loss 4.0 lr 1e-3 tok/s 100");
  EXPECT_TRUE(printed.worker_writes_file());
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u) << "nothing more after the worker's own line";
  EXPECT_NE(lines[1].find("\"mine\""), std::string::npos);
}

TEST_F(PrintedMetricsTest, AFifoInPlaceOfTheFileNeitherBlocksNorIsWritten) {
  ::unlink(path_.c_str());
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  PrintedMetrics printed = Make(telemetry::ProgressFormat::kPrimus);
  printed.OnLine("step 1/10 loss 5.0");  // returns: a blocking open would hang the agent here
  EXPECT_EQ(printed.records(), 0);
}

TEST_F(PrintedMetricsTest, AMegatronLinesTokensPerGpuStandForTheWholeJob) {
  auto reader = telemetry::ProgressLineReader::Create(telemetry::ProgressFormat::kMegatron);
  ASSERT_TRUE(reader.ok());
  PrintedMetrics printed(std::move(*reader), path_, 0, 8);
  printed.OnLine(" iteration        4/     100 | tokens/s/GPU inst/harmonic mean: 1000.0/900.0 | lm loss: 9.0E+00 |");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  auto metrics = telemetry::ParseMetricsLine(lines[0]);
  ASSERT_TRUE(metrics && metrics->tokens_per_s);
  EXPECT_DOUBLE_EQ(*metrics->tokens_per_s, 8000) << "printed by one rank for 8 GPUs";
}

TEST_F(PrintedMetricsTest, MegatronsTimerBlockIsASecondRecordOfItsStepWithTheParts) {
  PrintedMetrics printed = Make(telemetry::ProgressFormat::kAuto);
  printed.OnLine(" iteration       10/     100 | elapsed time per iteration (ms): 1000.0 | lm loss: 9.0E+00 |");
  printed.OnLine("(min, max) time across ranks (ms):");
  printed.OnLine("    forward-backward ...............................: (700.00, 800.00)");
  printed.OnLine("    optimizer ......................................: (90.00, 100.00)");
  EXPECT_EQ(Lines().size(), 1u) << "the block is not over yet";
  printed.OnOutputPaused();
  // The next block ends at the next iteration line, which comes after it.
  printed.OnLine(" iteration       20/     100 | elapsed time per iteration (ms): 1000.0 | lm loss: 8.0E+00 |");
  printed.OnLine("max time across ranks (ms):");
  printed.OnLine("    forward-backward ...............................: 810.00");
  printed.OnLine(" iteration       30/     100 | elapsed time per iteration (ms): 1000.0 | lm loss: 7.0E+00 |");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 5u);
  std::vector<int64_t> steps;
  for (const std::string& line : lines) steps.push_back(*telemetry::ParseMetricsLine(line)->step);
  EXPECT_EQ(steps, (std::vector<int64_t>{10, 10, 20, 20, 30}));
  auto block = telemetry::ParseMetricsLine(lines[1]);
  ASSERT_EQ(block->time_parts.size(), 2u);
  EXPECT_EQ(block->time_parts[0].name, "forward-backward");
  EXPECT_DOUBLE_EQ(block->time_parts[0].seconds, 0.8);
  EXPECT_DOUBLE_EQ(*block->time_parts[0].fastest_seconds, 0.7);
  EXPECT_DOUBLE_EQ(*block->loss, 9.0) << "the iteration's own record, with the parts";
  EXPECT_DOUBLE_EQ(telemetry::ParseMetricsLine(lines[3])->time_parts.at(0).seconds, 0.81);
}

TEST_F(PrintedMetricsTest, APlantedLinkIsNotFollowed) {
  std::string target = dir_.path() + "/elsewhere";
  ASSERT_TRUE(WriteFileAtomic(target, "").ok());
  ::unlink(path_.c_str());
  ASSERT_EQ(::symlink(target.c_str(), path_.c_str()), 0);
  PrintedMetrics printed = Make(telemetry::ProgressFormat::kPrimus);
  printed.OnLine("step 1/10 loss 5.0");
  EXPECT_EQ(printed.records(), 0);
  auto text = ReadFile(target);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "");
}

}  // namespace
}  // namespace primus::agent
