#include "util/strings.h"

#include <gtest/gtest.h>

#include "run_process.h"

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

TEST(StringsTest, JoinNumbersWritesDecimalsBetweenSeparators) {
  EXPECT_EQ(JoinNumbers({0, 2, 15}, ", "), "0, 2, 15");
  EXPECT_EQ(JoinNumbers({-1}, ","), "-1");
  EXPECT_EQ(JoinNumbers({}, ","), "");
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

// The awkward arguments of the argument-integrity tests, quoted by
// ShellQuote and read back by a real bash: the same bytes, and the quoted
// text holds no control character (it stays on one line and cannot drive
// a terminal).
const std::vector<std::string>& AwkwardArguments() {
  static const std::vector<std::string> args = {
      "x\necho INJECTED > injected #", "import sys\nprint(1)", "cr\rhere", "esc\x1b[2Jcls", "$(id)", "`id`",
      "it's \"q\"", "\xff\xfe", "", "tab\there", "del\x7f", "\xc2\x9b" "31m", "\xe2\x80\xaertl", "ünïcödé",
      "back\\slash", "\\x41", "$'x'", "\x01\x1f", "new\n", "\x1b" "1"};
  return args;
}

TEST(StringsTest, ShellQuoteIsExactForBashAndOneLineOfPrintableText) {
  for (const std::string& arg : AwkwardArguments()) {
    std::string quoted = ShellQuote(arg);
    EXPECT_FALSE(HasControlCharacter(quoted)) << quoted;
    EXPECT_EQ(quoted.find('\n'), std::string::npos) << quoted;
  }
  EXPECT_EQ(ShellQuote("a\nb"), "$'a\\nb'");
  EXPECT_EQ(ShellQuote("it's\x1b"), "$'it\\'s\\x1b'");
  EXPECT_EQ(ShellQuote("\xff" "1"), "$'\\xff1'");
  EXPECT_EQ(ShellQuote("ünï"), "'ünï'") << "printable UTF-8 stays readable";

  std::string script = "printf '%s\\0'";
  for (const std::string& arg : AwkwardArguments()) script += " " + ShellQuote(arg);
  testing::ProcessOptions options;
  options.timeout_s = 10;
  testing::ProcessResult run = testing::RunProcess({"bash", "-c", script}, options);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string expected;
  for (const std::string& arg : AwkwardArguments()) expected += arg + std::string(1, '\0');
  EXPECT_EQ(run.out, expected);
  // In the C locale too: \xHH escapes are bytes, not characters.
  testing::ProcessOptions c_locale = options;
  c_locale.env["LC_ALL"] = "C";
  testing::ProcessResult in_c = testing::RunProcess({"bash", "-c", script}, c_locale);
  ASSERT_EQ(in_c.exit_code, 0) << in_c.err;
  EXPECT_EQ(in_c.out, expected);
}

TEST(StringsTest, ControlCharactersAreEscapedForCommentsAndLogs) {
  EXPECT_EQ(EscapeControlCharacters("a\nb\rc\x1b[2J\xff"), "a\\nb\\rc\\x1b[2J\\xff");
  EXPECT_EQ(EscapeControlCharacters("line1\n\tline2\r", /*keep_line_breaks=*/true), "line1\n\tline2\\r");
  EXPECT_EQ(EscapeControlCharacters("plain ünï text"), "plain ünï text");
  EXPECT_TRUE(IsValidUtf8("ünïcödé"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf")) << "overlong";
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80")) << "surrogate";
  EXPECT_FALSE(IsValidUtf8("\xe2\x82")) << "cut short";
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
