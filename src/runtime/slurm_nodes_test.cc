#include "runtime/slurm_nodes.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

TEST(SlurmNodesTest, CountsAndRangesPassThrough) {
  EXPECT_EQ(*SlurmNodeCount("4", "flag -N"), "4");
  EXPECT_EQ(*SlurmNodeCount("2-4", "flag -N"), "2-4");
  EXPECT_EQ(*SlurmNodeCount(" 3-3 ", "flag -N"), "3-3");
  EXPECT_EQ(*SlurmNodeCount("262144", "flag -N"), "262144");
}

TEST(SlurmNodesTest, EmptyAndZeroLeaveItToSlurm) {
  EXPECT_EQ(*SlurmNodeCount("", "default"), "");
  EXPECT_EQ(*SlurmNodeCount("0", "flag -N"), "");
}

TEST(SlurmNodesTest, AnythingElseIsAConfigErrorNamingTheSetting) {
  for (const char* text : {"abc", "-2", "2-", "-", "4-2", "0-2", "1-262145", "262145", "2,4", "1.5", "2-4-6", "+3"}) {
    Result<std::string> count = SlurmNodeCount(text, "flag --nodes");
    ASSERT_FALSE(count.ok()) << text;
    EXPECT_EQ(count.error().code, ExitCode::kConfig) << text;
    EXPECT_EQ(count.error().message.rfind("flag --nodes: slurm.nodes '", 0), 0u) << count.error().message;
  }
  EXPECT_NE(SlurmNodeCount("4-2", "flag -N").error().message.find("at least 4 but at most 2"), std::string::npos);
}

}  // namespace
}  // namespace primus::runtime
