#include "runtime/container_name.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace primus::runtime {
namespace {

TEST(ContainerNameTest, JobRankAndSuffix) {
  EXPECT_EQ(ContainerName("4711", 3, "0a1b2c"), "primus-4711-n3-0a1b2c");
  EXPECT_EQ(ContainerName("", 0, "0a1b2c"), "primus-n0-0a1b2c");
  EXPECT_EQ(ContainerName("job/with spaces:1", 1, "ff"), "primus-job_with_spaces_1-n1-ff");
}

TEST(ContainerNameTest, RandomSuffixesDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    std::string suffix = RandomSuffix();
    EXPECT_TRUE(std::regex_match(suffix, std::regex("[0-9a-f]{6}"))) << suffix;
    seen.insert(suffix);
  }
  EXPECT_GT(seen.size(), 45u);
}

}  // namespace
}  // namespace primus::runtime
