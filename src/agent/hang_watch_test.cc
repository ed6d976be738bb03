#include "agent/hang_watch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_test_util.h"

namespace primus::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

testing::ScopedTempDir scratch("hang");

std::string Heartbeat() {
  static int count = 0;
  std::string path = scratch.path() + "/heartbeat" + std::to_string(++count);
  ::close(::open(path.c_str(), O_CREAT | O_WRONLY, 0644));
  return path;
}

void SetMtimeAgo(const std::string& path, double seconds_ago) {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = now.tv_sec - static_cast<time_t>(seconds_ago);
  times[0].tv_nsec = times[1].tv_nsec = now.tv_nsec;
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
}

TEST(HangWatchTest, DisabledWatchHasNoDeadline) {
  HangWatch watch(0);
  watch.Track(0, Heartbeat(), SteadyClock::now());
  EXPECT_FALSE(watch.NextDeadline().has_value());
  EXPECT_TRUE(watch.CollectHung(SteadyClock::now() + seconds(1000)).empty());
}

TEST(HangWatchTest, DeadlineFollowsTheQuietestWorkerAndOutputMovesIt) {
  HangWatch watch(10);
  SteadyTime start = SteadyClock::now();
  watch.Track(0, Heartbeat(), start);
  watch.Track(1, Heartbeat(), start + seconds(2));
  EXPECT_EQ(*watch.NextDeadline(), start + seconds(10));
  watch.NoteOutput(0, start + seconds(5));
  EXPECT_EQ(*watch.NextDeadline(), start + seconds(12));
  watch.Untrack(1);
  EXPECT_EQ(*watch.NextDeadline(), start + seconds(15));
}

TEST(HangWatchTest, SilentWorkerIsHungUnlessItsHeartbeatWasTouched) {
  std::string quiet = Heartbeat(), beating = Heartbeat();
  SetMtimeAgo(quiet, 100);
  SetMtimeAgo(beating, 100);
  HangWatch watch(10);
  SteadyTime now = SteadyClock::now();
  watch.Track(0, quiet, now - seconds(30));
  watch.Track(1, beating, now - seconds(30));
  SetMtimeAgo(beating, 1);  // touched a second ago
  std::vector<size_t> hung = watch.CollectHung(now);
  ASSERT_EQ(hung.size(), 1u);
  EXPECT_EQ(hung[0], 0u);
  // The heartbeat moved worker 1's deadline to about 9 s from now.
  watch.Untrack(0);
  auto deadline = watch.NextDeadline();
  ASSERT_TRUE(deadline.has_value());
  EXPECT_GT(*deadline, now + seconds(8));
  EXPECT_LT(*deadline, now + seconds(10));
}

}  // namespace
}  // namespace primus::agent
