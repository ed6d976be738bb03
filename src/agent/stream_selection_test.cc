#include "agent/stream_selection.h"

#include <gtest/gtest.h>

namespace primus::agent {
namespace {

TEST(StreamSelectionTest, OneDigitIsForEveryLocalRank) {
  for (int digit = 0; digit <= 3; ++digit) {
    auto selection = ParseStreamSelection(std::to_string(digit), "--tee");
    ASSERT_TRUE(selection.ok());
    EXPECT_EQ(selection->For(0), digit);
    EXPECT_EQ(selection->For(7), digit);
    EXPECT_EQ(FormatStreamSelection(*selection), std::to_string(digit));
  }
  auto empty = ParseStreamSelection("", "--tee");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(empty->For(0), 0);
}

TEST(StreamSelectionTest, PerRankFormLeavesUnlistedRanksAlone) {
  auto selection = ParseStreamSelection("0:1,1:2,12:3", "--redirects");
  ASSERT_TRUE(selection.ok());
  EXPECT_EQ(selection->For(0), kStdoutStream);
  EXPECT_EQ(selection->For(1), kStderrStream);
  EXPECT_EQ(selection->For(12), kStdoutStream | kStderrStream);
  EXPECT_EQ(selection->For(2), 0);
  EXPECT_EQ(FormatStreamSelection(*selection), "0:1,1:2,12:3");
}

TEST(StreamSelectionTest, AnythingElseIsAUsageErrorNamingTheSetting) {
  for (const char* text : {"4", "-1", "all", "0:4", "0:", ":1", "a:1", "0:1,", "0=1", "1 2"}) {
    auto selection = ParseStreamSelection(text, "--redirects");
    ASSERT_FALSE(selection.ok()) << text;
    EXPECT_EQ(selection.error().code, ExitCode::kUsage) << text;
    EXPECT_NE(selection.error().message.find("--redirects '"), std::string::npos) << selection.error().message;
    EXPECT_NE(selection.error().hint.find("0:3,1:2"), std::string::npos);
  }
}

}  // namespace
}  // namespace primus::agent
