// The blocks below are what megatron/core/timers.py (core_v0.12 to
// core_v0.19, ../shared/upstream/) prints: its '\n    {}: ({:.2f}, {:.2f})'
// .format((name + ' ').ljust(48, '.'), min, max) lines and their max and
// all-ranks variants, made here with the same padding.
#include "telemetry/megatron_timers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

namespace primus::telemetry {
namespace {

// Python's (name + ' ').ljust(48, '.').
std::string Padded(const std::string& name) {
  std::string padded = name + " ";
  if (padded.size() < 48) padded.append(48 - padded.size(), '.');
  return padded;
}

std::string MinMaxLine(const std::string& name, double min, double max) {
  return fmt::format("    {}: ({:.2f}, {:.2f})", Padded(name), min, max);
}

const StepTimePart* Find(const std::vector<StepTimePart>& parts, const std::string& name) {
  for (const StepTimePart& part : parts) {
    if (part.name == name) return &part;
  }
  return nullptr;
}

TEST(MegatronTimersTest, MinMaxBlockGivesTheSlowestAndFastestRanksSeconds) {
  MegatronTimerBlock block;
  EXPECT_FALSE(block.Start(" [2026-11-28 10:00:00] iteration 10/ 100 | lm loss: 7.5E+00 |"));
  ASSERT_TRUE(block.Start("(min, max) time across ranks (ms):"));
  EXPECT_TRUE(block.Feed(MinMaxLine("forward-backward", 812.34, 845.67)));
  EXPECT_TRUE(block.Feed(MinMaxLine("all-grads-sync", 10.5, 40.25)));
  // A name too long for the dots still reads.
  EXPECT_TRUE(block.Feed(MinMaxLine("forward-backward-send-forward-backward-recv-longer-name", 1, 2)));
  EXPECT_FALSE(block.Feed(" [2026-11-28 10:00:10] iteration 20/ 100 | lm loss: 7.1E+00 |"));
  std::vector<StepTimePart> parts = block.Finish();
  ASSERT_EQ(parts.size(), 3u);
  const StepTimePart* forward_backward = Find(parts, "forward-backward");
  ASSERT_NE(forward_backward, nullptr);
  EXPECT_DOUBLE_EQ(forward_backward->seconds, 0.84567);
  EXPECT_DOUBLE_EQ(*forward_backward->fastest_seconds, 0.81234);
  EXPECT_FALSE(forward_backward->slowest_rank);
  EXPECT_FALSE(block.open());
}

TEST(MegatronTimersTest, MaxAndAllRanksBlocks) {
  MegatronTimerBlock block;
  ASSERT_TRUE(block.Start("max time across ranks (ms):"));
  EXPECT_TRUE(block.Feed(fmt::format("    {}: {:.2f}", Padded("optimizer"), 55.5)));
  std::vector<StepTimePart> parts = block.Finish();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_DOUBLE_EQ(parts[0].seconds, 0.0555);
  EXPECT_FALSE(parts[0].fastest_seconds);

  ASSERT_TRUE(block.Start("times across ranks (ms):"));
  EXPECT_TRUE(block.Feed("  forward-backward:"));
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_TRUE(block.Feed(fmt::format("     rank {:2d}: {:.2f}", rank, rank == 2 ? 900.0 : 800.0 + rank)));
  }
  EXPECT_TRUE(block.Feed("  optimizer:"));
  EXPECT_TRUE(block.Feed("     rank  0: 50.00"));
  parts = block.Finish();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_DOUBLE_EQ(parts[0].seconds, 0.9);
  EXPECT_EQ(parts[0].slowest_rank, 2);
  EXPECT_DOUBLE_EQ(*parts[0].fastest_seconds, 0.8);
}

TEST(MegatronTimersTest, HostileBlocksAreBounded) {
  MegatronTimerBlock block;
  ASSERT_TRUE(block.Start("(min, max) time across ranks (ms):"));
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(block.Feed(MinMaxLine(fmt::format("timer-{}", i), 1, 2)));
  EXPECT_FALSE(block.Feed(MinMaxLine("bad name!", 1, 2)));
  EXPECT_EQ(block.Finish().size(), kMaxStepTimeParts);

  ASSERT_TRUE(block.Start("times across ranks (ms):"));
  EXPECT_TRUE(block.Feed("     rank  0: 5.00"));  // no timer named yet: taken, counted nowhere
  EXPECT_TRUE(block.Feed("  t:"));
  EXPECT_TRUE(block.Feed("     rank 99999999: 5.00"));  // beyond 2^24: ignored
  EXPECT_FALSE(block.Feed("     rank  1: 1e999"));
  EXPECT_FALSE(block.Feed(std::string(600, ' ') + "rank 1: 5.00"));
  EXPECT_TRUE(block.Finish().empty());
}

}  // namespace
}  // namespace primus::telemetry
