#include "telemetry/metrics_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "util/scoped_temp_dir.h"

namespace primus::telemetry {
namespace {

class MetricsReaderTest : public ::testing::Test {
 protected:
  void Append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }
  void Replace(const std::string& text) { std::ofstream(path_, std::ios::trunc) << text; }
  std::optional<int64_t> Step() {
    const auto& metrics = reader_.Poll();
    return metrics ? metrics->step : std::nullopt;
  }
  ScopedTempDir dir_;
  std::string path_ = dir_.path() + "/rank0.metrics.jsonl";
  MetricsReader reader_{path_};
};

TEST_F(MetricsReaderTest, AMissingFileIsNoMetricsYet) { EXPECT_FALSE(Step()); }

TEST_F(MetricsReaderTest, KeepsTheLastCompleteLine) {
  Append("{\"step\": 1, \"loss\": 5.5}\n{\"step\": 2, \"loss\": 5.1, \"tokens_per_s\": 10}\n");
  EXPECT_EQ(Step(), 2);
  EXPECT_EQ(reader_.latest()->loss, 5.1);
  ASSERT_TRUE(reader_.latest()->metrics_time);
  EXPECT_GT(*reader_.latest()->metrics_time, 1.7e9);
  EXPECT_EQ(Step(), 2);  // nothing new
}

TEST_F(MetricsReaderTest, APartialLastLineWaitsForItsEnd) {
  Append("{\"step\": 1}\n{\"step\": ");
  EXPECT_EQ(Step(), 1);
  Append("2, \"loss\"");
  EXPECT_EQ(Step(), 1);
  Append(": 3.0}\n");
  EXPECT_EQ(Step(), 2);
  EXPECT_EQ(reader_.latest()->loss, 3.0);
}

TEST_F(MetricsReaderTest, LinesThatAreNotJsonObjectsAreSkipped) {
  Append("{\"step\": 4}\nnot json\n[1, 2]\n");
  EXPECT_EQ(Step(), 4);
  Append("{broken\n");
  EXPECT_EQ(Step(), 4);
}

TEST_F(MetricsReaderTest, ATruncatedFileIsReadFromTheStart) {
  Append("{\"step\": 10}\n{\"step\": 11}\n");
  EXPECT_EQ(Step(), 11);
  Replace("{\"step\": 1}\n");
  EXPECT_EQ(Step(), 1);
}

TEST_F(MetricsReaderTest, ARotatedFileIsFollowed) {
  Append("{\"step\": 10}\n{\"step\": 11}\n{\"step\": 12}\n");
  EXPECT_EQ(Step(), 12);
  ASSERT_EQ(std::rename(path_.c_str(), (path_ + ".1").c_str()), 0);
  Append("{\"step\": 13}\n{\"step\": 14}\n{\"step\": 15}\n{\"step\": 16}\n");  // longer than before
  EXPECT_EQ(Step(), 16);
}

TEST_F(MetricsReaderTest, GigabytesCostOneBoundedReadOfTheEnd) {
  {
    std::ofstream out(path_);
    std::string line = "{\"step\": 1, \"padding\": \"" + std::string(1000, 'x') + "\"}\n";
    for (int i = 0; i < 5000; ++i) out << line;  // 5 MB: 80 times the bounded read
    out << "{\"step\": 20001}\n";
  }
  EXPECT_EQ(Step(), 20001);
  Append("{\"step\": 20002}\n");
  EXPECT_EQ(Step(), 20002);
}

TEST_F(MetricsReaderTest, AnEndlessLineIsDroppedNotKept) {
  Append("{\"step\": 3}\n");
  EXPECT_EQ(Step(), 3);
  std::string huge(MetricsReader::kMaxLineBytes / 2, 'y');
  for (int i = 0; i < 5; ++i) {
    Append(huge);
    EXPECT_EQ(Step(), 3);
  }
  Append("\n{\"step\": 4}\n");
  EXPECT_EQ(Step(), 4);
}

}  // namespace
}  // namespace primus::telemetry
