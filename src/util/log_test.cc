#include "util/log.h"

#include <gtest/gtest.h>

#include <regex>

namespace primus::log {
namespace {

TEST(LogTest, LineHasTimeHostLevelAndMessage) {
  std::string line = FormatLine(Level::kWarn, "disk almost full");
  std::regex shape(R"(^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[[^\]]+\] \[WARN\] disk almost full\n$)");
  EXPECT_TRUE(std::regex_match(line, shape)) << line;
  EXPECT_NE(line.find("[" + HostName() + "]"), std::string::npos);
}

TEST(LogTest, LevelsFilter) {
  Level saved = GetLevel();
  SetLevel(Level::kWarn);
  EXPECT_FALSE(Enabled(Level::kInfo));
  EXPECT_TRUE(Enabled(Level::kError));
  SetLevel(saved);
}

TEST(LogTest, ParseLevelAcceptsKnownNamesOnly) {
  Level level;
  EXPECT_TRUE(ParseLevel("warning", &level));
  EXPECT_EQ(level, Level::kWarn);
  EXPECT_FALSE(ParseLevel("verbose", &level));
}

}  // namespace
}  // namespace primus::log
