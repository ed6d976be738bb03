#include "agent/error_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "agent/agent_test_util.h"
#include "util/files.h"

namespace primus::agent {
namespace {

testing::ScopedTempDir scratch("error-file");

std::string TempFile(const std::string& content) {
  static int count = 0;
  std::string path = scratch.path() + "/error" + std::to_string(++count) + ".json";
  EXPECT_TRUE(WriteFileAtomic(path, content).ok());
  return path;
}

TEST(ErrorFileTest, ReadsPyTorchRecordFormat) {
  std::string path = TempFile(
      R"({"message": {"message": "ValueError: boom", "extraInfo": {"py_callstack": "Traceback (most recent call last):\n  File \"t.py\", line 3\nValueError: boom\n", "timestamp": "1795341600"}}})");
  auto report = ReadErrorFile(path);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->message, "ValueError: boom");
  EXPECT_NE(report->traceback.find("line 3"), std::string::npos);
  ASSERT_TRUE(report->timestamp.has_value());
  EXPECT_DOUBLE_EQ(*report->timestamp, 1795341600.0);
}

TEST(ErrorFileTest, ReadsFlatMessagesAndNumericTimestamps) {
  auto report = ReadErrorFile(TempFile(R"({"message": "plain text", "timestamp": 12.5})"));
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->message, "plain text");
  EXPECT_DOUBLE_EQ(report->timestamp.value_or(0), 12.5);
}

TEST(ErrorFileTest, MissingEmptyAndGarbageFiles) {
  EXPECT_FALSE(ReadErrorFile("/nonexistent/error.json").has_value());
  EXPECT_FALSE(ReadErrorFile(TempFile("")).has_value());
  auto garbage = ReadErrorFile(TempFile("not json at all"));
  ASSERT_TRUE(garbage.has_value());
  EXPECT_NE(garbage->message.find("not json at all"), std::string::npos);
  EXPECT_FALSE(garbage->timestamp.has_value());
}

}  // namespace
}  // namespace primus::agent
