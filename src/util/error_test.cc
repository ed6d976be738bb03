#include "util/error.h"

#include <gtest/gtest.h>

namespace primus {
namespace {

TEST(ErrorTest, FormatIncludesHintOnlyWhenPresent) {
  EXPECT_EQ(UsageError("unknown mode 'dirct'").Format(), "error: unknown mode 'dirct'");
  EXPECT_EQ(ConfigError("bad", "fix it").Format(), "error: bad\n  hint: fix it");
}

TEST(ErrorTest, HelpersCarryTheirExitCodes) {
  EXPECT_EQ(UsageError("x").code, ExitCode::kUsage);
  EXPECT_EQ(ConfigError("x").code, ExitCode::kConfig);
  EXPECT_EQ(UnavailableError("x").code, ExitCode::kUnavailable);
  EXPECT_EQ(TaskError("x").code, ExitCode::kTaskFailed);
}

TEST(ResultTest, HoldsValueOrError) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad = UnavailableError("no srun");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kUnavailable);
  EXPECT_FALSE(bad.status().ok());
}

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  Status e = TaskError("boom");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "boom");
}

}  // namespace
}  // namespace primus
