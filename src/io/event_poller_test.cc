#include "io/event_poller.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "io/unique_fd.h"

namespace primus::io {
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

}  // namespace
}  // namespace primus::io
