#include "util/random.h"

#include <gtest/gtest.h>

namespace primus {
namespace {

TEST(RandomTest, AJobTokenIsThirtyTwoHexDigitsFromTheKernel) {
  Result<std::string> first = NewJobToken();
  Result<std::string> second = NewJobToken();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->size(), 32u);
  EXPECT_EQ(first->find_first_not_of("0123456789abcdef"), std::string::npos) << *first;
  EXPECT_NE(*first, *second);
}

TEST(RandomTest, RandomHexGivesTwoDigitsPerByteUpTo64Bytes) {
  EXPECT_EQ(RandomHex(3).size(), 6u);
  EXPECT_EQ(RandomHex(100).size(), 128u) << "at most 64 bytes";
  EXPECT_NE(RandomHex(8), RandomHex(8));
}

}  // namespace
}  // namespace primus
