#include "agent/log_limiter.h"

#include <gtest/gtest.h>

namespace primus::agent {
namespace {

TEST(LogLimiterTest, ABurstPerWindowThenSilenceThenACount) {
  LogLimiter limiter(3, 10);
  SteadyTime start = SteadyClock::now();
  int logged = 0;
  for (int i = 0; i < 1000; ++i) {
    if (limiter.Admit(start + Seconds(i * 0.001))) ++logged;
  }
  EXPECT_EQ(logged, 3) << "a thousand refusals in one second are three lines";
  EXPECT_EQ(limiter.suppressed(), 997u);
  auto next = limiter.Admit(start + Seconds(10.5));
  ASSERT_TRUE(next.has_value()) << "a new window logs again";
  EXPECT_EQ(*next, " (and 997 more like it were not logged)");
  auto after = limiter.Admit(start + Seconds(10.6));
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(*after, "") << "the count is said once";
  for (int i = 0; i < 5; ++i) limiter.Admit(start + Seconds(10.7));
  EXPECT_EQ(limiter.TakeSuppressed(), 4u) << "a closing count of what was held back (3 per window)";
  EXPECT_EQ(limiter.TakeSuppressed(), 0u);
}

}  // namespace
}  // namespace primus::agent
