#include "agent/rank_list.h"

#include <gtest/gtest.h>

namespace primus::agent {
namespace {

TEST(RankListTest, ParsesSinglesAndRanges) {
  EXPECT_EQ(*ParseRankList("0"), std::vector<int>{0});
  EXPECT_EQ(*ParseRankList("3, 0,8-10"), (std::vector<int>{0, 3, 8, 9, 10}));
  EXPECT_EQ(*ParseRankList("1-2,2"), (std::vector<int>{1, 2}));
  EXPECT_TRUE(ParseRankList("")->empty());
}

TEST(RankListTest, RejectsWhatIsNotARank) {
  for (const char* bad : {"a", "1-", "5-3", "-1", "1,,2", "0-99999999"}) {
    auto ranks = ParseRankList(bad);
    ASSERT_FALSE(ranks.ok()) << bad;
    EXPECT_EQ(ranks.error().code, ExitCode::kUsage);
  }
}

}  // namespace
}  // namespace primus::agent
