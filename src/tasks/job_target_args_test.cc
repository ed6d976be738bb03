#include "tasks/job_target_args.h"

#include <gtest/gtest.h>

namespace primus::tasks {
namespace {

const std::vector<OptionSpec>& Table() {
  static const std::vector<OptionSpec> table = {
      {{"--json"}, OptionSpec::Kind::kFlag, "", "", "JSON"},
      {{"--rank"}, OptionSpec::Kind::kValue, "R", "", "a rank"},
  };
  return table;
}

TEST(JobTargetArgsTest, OptionsOnEitherSideOfOneTarget) {
  auto parsed = ParseJobTargetArgs({"--json", "run-1", "--rank", "3"}, Table(), "logs", "e.g. primus-cli logs RUN_ID");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->target, "run-1");
  ASSERT_EQ(parsed->options.size(), 2u);
  EXPECT_EQ(parsed->options[1].value, "3");
  auto none = ParseJobTargetArgs({}, Table(), "logs", "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->target, "");
}

TEST(JobTargetArgsTest, TwoTargetsOrAnUnknownFlagAreUsageErrors) {
  auto two = ParseJobTargetArgs({"a", "--json", "b"}, Table(), "stop", "e.g. primus-cli stop RUN_ID");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().code, ExitCode::kUsage);
  EXPECT_EQ(two.error().message, "stop takes one TARGET, not 2 (a b)");
  EXPECT_EQ(two.error().hint, "e.g. primus-cli stop RUN_ID");
  auto unknown = ParseJobTargetArgs({"--jsno"}, Table(), "stop", "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ExitCode::kUsage);
}

}  // namespace
}  // namespace primus::tasks
