// The event files are read back by a decoder that is not ours:
// tests/tools/read_tfevents.py, protobuf's Python runtime with TensorBoard's
// public Event/Summary schema and crcmod's CRC-32C (Debian python3-protobuf,
// python3-crcmod; the test skips, saying so, where they are missing).
#include "telemetry/tensorboard_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "telemetry/tensorboard_feed.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::telemetry {
namespace {

using nlohmann::json;

std::vector<json> ReadBack(const std::string& path, std::string* skip) {
  testing::ProcessResult read =
      testing::RunProcess({"/usr/bin/python3", std::string(PRIMUS_SOURCE_DIR) + "/tests/tools/read_tfevents.py", path});
  std::vector<json> events;
  if (read.exit_code == 2) {
    *skip = "the independent decoder is missing: " + read.err;
    return events;
  }
  EXPECT_EQ(read.exit_code, 0) << read.all();
  for (const std::string& line : Split(read.out, '\n')) {
    if (!line.empty()) events.push_back(json::parse(line));
  }
  return events;
}

std::vector<std::string> EventFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with("events.out.tfevents.")) files.push_back(entry.path());
  }
  return files;
}

TEST(TensorBoardWriterTest, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);  // CRC-32C's published check value
  std::string record = TfRecord("abc");
  ASSERT_EQ(record.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(record.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(record.substr(12, 3), "abc");
}

TEST(TensorBoardWriterTest, EventsReadBackByProtobufWithTheirStepsAndScalars) {
  ScopedTempDir dir("tensorboard");
  auto writer = TensorBoardWriter::Open(dir.path() + "/run", "host1");
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  ASSERT_TRUE(writer->Add(10, 1764000000.5, {{"train/loss", 7.5f}, {"train/lr", 3e-4f}}).ok());
  ASSERT_TRUE(writer->Add(20, 1764000001.5, {{"train/loss", 6.25f}}).ok());
  struct stat info {};
  ASSERT_EQ(::stat(writer->path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_NE(writer->path().find("events.out.tfevents."), std::string::npos);

  std::string skip;
  std::vector<json> events = ReadBack(writer->path(), &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["file_version"], "brain.Event:2");
  EXPECT_EQ(events[1]["step"], 10);
  EXPECT_DOUBLE_EQ(events[1]["wall_time"].get<double>(), 1764000000.5);
  EXPECT_DOUBLE_EQ(events[1]["scalars"]["train/loss"].get<double>(), 7.5);
  EXPECT_NEAR(events[1]["scalars"]["train/lr"].get<double>(), 3e-4, 1e-9);
  EXPECT_EQ(events[2]["step"], 20);
  EXPECT_DOUBLE_EQ(events[2]["scalars"]["train/loss"].get<double>(), 6.25);
}

TEST(TensorBoardWriterTest, ADamagedRecordIsCaughtByTheDecoder) {
  ScopedTempDir dir("tensorboard");
  auto writer = TensorBoardWriter::Open(dir.path(), "host1");
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Add(1, 1.0, {{"train/loss", 1.0f}}).ok());
  {
    // One byte of the last record's data flipped.
    FILE* file = std::fopen(writer->path().c_str(), "r+b");
    ASSERT_NE(file, nullptr);
    std::fseek(file, -6, SEEK_END);
    int byte = std::fgetc(file);
    std::fseek(file, -6, SEEK_END);
    std::fputc(byte ^ 0x40, file);
    std::fclose(file);
  }
  testing::ProcessResult read = testing::RunProcess(
      {"/usr/bin/python3", std::string(PRIMUS_SOURCE_DIR) + "/tests/tools/read_tfevents.py", writer->path()});
  if (read.exit_code == 2) GTEST_SKIP() << "the independent decoder is missing: " << read.err;
  EXPECT_EQ(read.exit_code, 1) << read.all();
  EXPECT_NE(read.err.find("CRC is wrong"), std::string::npos) << read.err;
}

json View(int step, double loss, int cpu_percent) {
  return json{{"job", {{"step", step}, {"loss", loss}, {"tokens_per_s", 1000.0}, {"progress", step / 100.0}}},
              {"nodes",
               {{{"node_rank", 0},
                 {"host_stats", {{"cpu_percent", cpu_percent}, {"mem_used_bytes", 1e9}}},
                 {"gpus", {{{"index", 0}, {"utilization_percent", 97}, {"power_watts", 600.5}}}},
                 {"workers", {{{"rank", 1}, {"lr", 0.5}}, {{"rank", 0}, {"lr", 0.25}, {"mfu", 0.4}}}}}}}};
}

TEST(TensorBoardFeedTest, TrainingScalarsAtTheStepAndSystemOnesEveryThirtySeconds) {
  auto [step, training] = TrainingScalars(View(10, 2.5, 150));
  ASSERT_EQ(step, 10);
  std::map<std::string, float> by_tag(training.begin(), training.end());
  EXPECT_FLOAT_EQ(by_tag["train/loss"], 2.5f);
  EXPECT_FLOAT_EQ(by_tag["train/lr"], 0.25f) << "the lowest rank's";
  EXPECT_FLOAT_EQ(by_tag["train/mfu"], 0.4f);
  Scalars system = SystemScalars(View(10, 2.5, 150));
  std::map<std::string, float> system_by_tag(system.begin(), system.end());
  EXPECT_FLOAT_EQ(system_by_tag["system/node0/cpu_cores"], 1.5f);
  EXPECT_FLOAT_EQ(system_by_tag["system/node0/gpu0/utilization"], 0.97f);
  EXPECT_FLOAT_EQ(system_by_tag["system/node0/gpu0/power_watts"], 600.5f);
  EXPECT_EQ(by_tag.count("step_time/compute_s"), 0u) << "no rank said where its step went";
  // Where the step went: the busiest rank's (the one the others wait for).
  json parts = View(10, 2.5, 150);
  parts["nodes"][0]["workers"][0]["time_parts"] = {{"compute", 0.5}, {"communication", 0.1}};
  parts["nodes"][0]["workers"][1]["time_parts"] = {{"compute", 0.2}, {"communication", 0.4}, {"data", 0.05}};
  std::map<std::string, float> with_parts;
  for (const auto& [tag, value] : TrainingScalars(parts).second) with_parts[tag] = value;
  EXPECT_FLOAT_EQ(with_parts["step_time/compute_s"], 0.5f);
  EXPECT_FLOAT_EQ(with_parts["step_time/communication_s"], 0.1f);
  // A figure a float cannot hold (a worker's loss of 1e300) is left out, not cast.
  auto [huge_step, huge] = TrainingScalars(View(10, 1e300, 150));
  for (const auto& [tag, value] : huge) EXPECT_NE(tag, "train/loss");

  // Published: a new training event only when the step moves; a run per attempt.
  ScopedTempDir dir("tensorboard-feed");
  TensorBoardFeed feed(dir.path() + "/tensorboard", "host1");
  feed.Publish(View(10, 2.5, 150), 0, 100.0);
  feed.Publish(View(10, 2.5, 150), 0, 101.0);
  feed.Publish(View(20, 2.0, 150), 0, 102.0);
  feed.Publish(View(20, 2.0, 150), 0, 140.0);  // no new step; system figures again after 30 s
  feed.Publish(View(5, 2.2, 150), 1, 141.0);
  std::vector<std::string> first = EventFiles(dir.path() + "/tensorboard/attempt_0");
  std::vector<std::string> second = EventFiles(dir.path() + "/tensorboard/attempt_1");
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  std::string skip;
  std::vector<json> events = ReadBack(first[0], &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  std::vector<int> loss_steps;
  int system_events = 0;
  for (const json& event : events) {
    if (event["scalars"].contains("train/loss")) loss_steps.push_back(event["step"]);
    if (event["scalars"].contains("system/node0/cpu_cores")) ++system_events;
  }
  EXPECT_EQ(loss_steps, (std::vector<int>{10, 20}));
  EXPECT_EQ(system_events, 2) << "at 100 s and 140 s, not every interval";
}

}  // namespace
}  // namespace primus::telemetry
