#include "analyze/log_line.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <string_view>

namespace primus::analyze {
namespace {

double Local(int year, int month, int day, int hour, int minute, int second) {
  std::tm parts{};
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  parts.tm_isdst = -1;
  return static_cast<double>(std::mktime(&parts));
}

TEST(LogLineTest, RankLogStampAndStream) {
  LogLineParser parser;
  LogLine line = parser.Parse("2026-11-24T09:19:28.495496 E Traceback (most recent call last):");
  EXPECT_NEAR(line.time, Local(2026, 11, 24, 9, 19, 28) + 0.495496, 1e-6);
  EXPECT_EQ(line.text, "Traceback (most recent call last):");
  EXPECT_EQ(line.rank, -1);
}

// Found by the log_scan fuzz target: a line holding only the start of a
// stamp ("2026") was read past its end. Here the bytes after the line would
// complete a stamp, so reading them would show.
TEST(LogLineTest, AShortLineIsNeverReadPastItsEnd) {
  const std::string buffer = "2026-11-24T09:19:28 E rest";
  for (size_t length : {4, 10, 13, 18}) {
    LogLine line = LogLineParser().Parse(std::string_view(buffer).substr(0, length));
    EXPECT_EQ(line.time, 0) << length;
    EXPECT_EQ(line.text, buffer.substr(0, length));
  }
}

TEST(LogLineTest, ConsoleStampsPythonLoggingAndRankPrefixes) {
  LogLineParser parser;
  LogLine console = parser.Parse("[2026-11-24 09:19:31.580] [vm] [ERROR] workers failed");
  EXPECT_NEAR(console.time, Local(2026, 11, 24, 9, 19, 31) + 0.58, 1e-6);
  EXPECT_EQ(console.text, "[vm] [ERROR] workers failed");
  EXPECT_EQ(console.rank, -1);  // "[vm]" has no rank

  LogLine python = parser.Parse("2026-11-24 09:19:31,125 - root - ERROR - boom");
  EXPECT_NEAR(python.time, Local(2026, 11, 24, 9, 19, 31) + 0.125, 1e-6);

  LogLine prefixed = parser.Parse("[node2:13] RuntimeError: boom");
  EXPECT_EQ(prefixed.host, "node2");
  EXPECT_EQ(prefixed.rank, 13);
  EXPECT_EQ(prefixed.text, "RuntimeError: boom");
  EXPECT_EQ(prefixed.time, 0);

  LogLine torch_warning = parser.Parse("[W socket.cpp:601] [c10d] The client socket has failed to connect");
  EXPECT_EQ(torch_warning.rank, -1);
  EXPECT_EQ(torch_warning.text, "[W socket.cpp:601] [c10d] The client socket has failed to connect");

  LogLine ending = parser.Parse("2026-11-24T09:19:28.000001 E rank 7: ended with signal 9 (SIGKILL)");
  EXPECT_EQ(ending.rank, 7);
  EXPECT_EQ(ending.text, "ended with signal 9 (SIGKILL)");

  LogLine plain = parser.Parse("no stamp [here:x] at all\r");
  EXPECT_EQ(plain.time, 0);
  EXPECT_EQ(plain.text, "no stamp [here:x] at all");
}

}  // namespace
}  // namespace primus::analyze
