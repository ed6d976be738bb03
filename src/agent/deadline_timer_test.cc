#include "agent/deadline_timer.h"

#include <gtest/gtest.h>

#include "io/event_poller.h"

namespace primus::agent {
namespace {

using io::EventPoller;

TEST(DeadlineTimerTest, FiresAtTheDeadlineAndNotBefore) {
  auto poller = EventPoller::Create();
  auto timer = DeadlineTimer::Create();
  ASSERT_TRUE(poller.ok() && timer.ok());
  ASSERT_TRUE(poller->Add(timer->fd(), 1).ok());
  SteadyTime start = SteadyClock::now();
  timer->ArmAt(start + std::chrono::milliseconds(30));
  EXPECT_TRUE(poller->Wait(5).empty());
  ASSERT_EQ(poller->Wait(2000).size(), 1u);
  EXPECT_GE(SteadyClock::now() - start, std::chrono::milliseconds(30));
  timer->Acknowledge();
  EXPECT_TRUE(poller->Wait(0).empty());
}

TEST(DeadlineTimerTest, DisarmedAndPastDeadlines) {
  auto poller = EventPoller::Create();
  auto timer = DeadlineTimer::Create();
  ASSERT_TRUE(poller->Add(timer->fd(), 1).ok());
  timer->ArmAt(SteadyClock::now() + std::chrono::milliseconds(10));
  timer->ArmAt(std::nullopt);
  EXPECT_TRUE(poller->Wait(30).empty());
  timer->ArmAt(SteadyClock::now() - std::chrono::seconds(1));
  EXPECT_EQ(poller->Wait(1000).size(), 1u);
  EXPECT_EQ(Seconds(-1), SteadyClock::duration::zero());
  EXPECT_EQ(Seconds(1.5), std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace primus::agent
