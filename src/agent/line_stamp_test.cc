#include "agent/line_stamp.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

namespace primus::agent {
namespace {

TEST(LineStampTest, FormatsLocalTimeWithMicroseconds) {
  setenv("TZ", "UTC", 1);
  tzset();
  LineStamp stamp;
  timespec when{1795341600, 123456789};  // 2026-11-22T10:00:00 UTC
  EXPECT_EQ(stamp.Format(when), "2026-11-22T10:00:00.123456");
  when.tv_nsec = 7000;
  EXPECT_EQ(stamp.Format(when), "2026-11-22T10:00:00.000007");
  when.tv_sec += 61;
  EXPECT_EQ(stamp.Format(when), "2026-11-22T10:01:01.000007");
  EXPECT_DOUBLE_EQ(stamp.seconds(), 1795341661.000007);
  unsetenv("TZ");
  tzset();
}

TEST(LineStampTest, NowHasTheFixedLength) {
  LineStamp stamp;
  EXPECT_EQ(stamp.Now().size(), LineStamp::kLength);
  EXPECT_GT(stamp.seconds(), 1.7e9);
}

}  // namespace
}  // namespace primus::agent
