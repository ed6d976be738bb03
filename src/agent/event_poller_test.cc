#include "agent/event_poller.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/deadline_timer.h"

namespace primus::agent {
namespace {

TEST(EventPollerTest, ReportsReadablePipesWithTheirTags) {
  auto poller = EventPoller::Create();
  ASSERT_TRUE(poller.ok());
  io::PipeEnds first, second;
  ASSERT_TRUE(io::MakePipe(&first) && io::MakePipe(&second));
  ASSERT_TRUE(poller->Add(first.read.get(), 11).ok());
  ASSERT_TRUE(poller->Add(second.read.get(), 22).ok());
  EXPECT_TRUE(poller->Wait(0).empty());
  ASSERT_TRUE(io::WriteAll(second.write.get(), "x", 1));
  const auto& ready = poller->Wait(1000);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].data.u64, 22u);
  poller->Remove(second.read.get());
  EXPECT_TRUE(poller->Wait(0).empty());
}

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
