#include "util/strings.h"

#include <gtest/gtest.h>

namespace primus {
namespace {

TEST(StringsTest, SplitKeepsEmptyFields) {
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string>{""}));
}

TEST(StringsTest, JoinAndTrim) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Trim("  x y \n"), "x y");
}

TEST(StringsTest, ParseNumbersRejectsTrailingGarbage) {
  EXPECT_EQ(ParseInt("42"), 42);
  EXPECT_EQ(ParseInt("-7"), -7);
  EXPECT_EQ(ParseInt("4x"), std::nullopt);
  EXPECT_EQ(ParseInt(""), std::nullopt);
  EXPECT_DOUBLE_EQ(*ParseDouble("1e-3"), 0.001);
  EXPECT_EQ(ParseDouble("0.1.2"), std::nullopt);
  EXPECT_EQ(ParseBool("Yes"), true);
  EXPECT_EQ(ParseBool("off"), false);
  EXPECT_EQ(ParseBool("maybe"), std::nullopt);
}

TEST(StringsTest, DidYouMeanFindsCloseTypos) {
  std::vector<std::string> modes = {"direct", "container", "slurm", "k8s"};
  EXPECT_EQ(ClosestMatch("dirct", modes), "direct");
  EXPECT_EQ(ClosestMatch("contianer", modes), "container");
  EXPECT_EQ(ClosestMatch("zzzzzz", modes), std::nullopt);
  EXPECT_EQ(DidYouMean("slrum", modes), " (did you mean 'slurm'?)");
  EXPECT_EQ(DidYouMean("qqqqq", modes), "");
}

TEST(StringsTest, ShellQuoteOnlyWhenNeeded) {
  EXPECT_EQ(ShellQuote("plain-arg_1.yaml"), "plain-arg_1.yaml");
  EXPECT_EQ(ShellQuote("has space"), "'has space'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellJoin({"srun", "-N", "2", "a b"}), "srun -N 2 'a b'");
}

}  // namespace
}  // namespace primus

namespace primus {
namespace {
TEST(StringsTest, TranspositionIsOneEdit) {
  EXPECT_EQ(EditDistance("slrum", "slurm"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}
}  // namespace
}  // namespace primus
