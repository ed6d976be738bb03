#include "util/clock.h"

#include <gtest/gtest.h>
#include <sys/time.h>

namespace primus {
namespace {

TEST(ClockTest, WallSecondsAreEpochSecondsAndMonotonicOnesNeverGoBack) {
  timeval now{};
  gettimeofday(&now, nullptr);
  EXPECT_NEAR(WallSeconds(), static_cast<double>(now.tv_sec), 2.0);
  double first = MonotonicSeconds();
  EXPECT_GE(MonotonicSeconds(), first);
}

}  // namespace
}  // namespace primus
