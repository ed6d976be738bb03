#include "benchmark/rank_groups.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(RankGroupsTest, EveryNthRankIsAGroup) {
  auto group = StridedGroup(9, 32, 8);
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(group->index, 1);
  EXPECT_EQ(group->count, 8);
  EXPECT_EQ(group->rank, 1);
  EXPECT_EQ(group->size, 4);
  EXPECT_EQ(group->members, (std::vector<int>{1, 9, 17, 25}));
  EXPECT_EQ(MemberList(*group), "1,9,17,25");
  auto whole = StridedGroup(3, 8, 1);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->size, 8);
  EXPECT_EQ(whole->rank, 3);
}

TEST(RankGroupsTest, StrideMustDivideTheWorld) {
  auto group = StridedGroup(0, 2, 8);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.error().code, ExitCode::kUsage);
  EXPECT_NE(group.error().message.find("--stride 8 needs a world size that is a multiple of 8, and this job has 2 ranks"),
            std::string::npos);
}

}  // namespace
}  // namespace primus::benchmark
