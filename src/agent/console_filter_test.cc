#include "agent/console_filter.h"

#include <gtest/gtest.h>

namespace primus::agent {
namespace {

TEST(ConsoleFilterTest, EverythingIsShownByDefault) {
  LaunchSpec spec;
  spec.nproc_per_node = 2;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(OnConsole(spec, rank, rank, kStdoutStream));
    EXPECT_TRUE(OnConsole(spec, rank, rank, kStderrStream));
  }
}

TEST(ConsoleFilterTest, LocalRanksFilterIsLocalOnEveryNode) {
  // Node 1 of two nodes with two workers each: global ranks 2 and 3.
  LaunchSpec spec;
  spec.nnodes = 2;
  spec.node_rank = 1;
  spec.nproc_per_node = 2;
  spec.local_ranks_filter = {0};
  EXPECT_TRUE(OnConsole(spec, 2, 0, kStdoutStream));
  EXPECT_FALSE(OnConsole(spec, 3, 1, kStdoutStream));
  // --ranks-filter stays global: rank 0 is not on this node.
  spec.local_ranks_filter.clear();
  spec.ranks_filter = {0};
  EXPECT_FALSE(OnConsole(spec, 2, 0, kStdoutStream));
  EXPECT_FALSE(OnConsole(spec, 3, 1, kStdoutStream));
  // Both: a stream must pass both.
  spec.ranks_filter = {3};
  spec.local_ranks_filter = {0, 1};
  EXPECT_FALSE(OnConsole(spec, 2, 0, kStdoutStream));
  EXPECT_TRUE(OnConsole(spec, 3, 1, kStderrStream));
}

TEST(ConsoleFilterTest, RedirectedStreamsStayOffTheConsoleUnlessTeed) {
  LaunchSpec spec;
  spec.nproc_per_node = 2;
  spec.redirects.by_local_rank = {{0, kStdoutStream}, {1, kStdoutStream | kStderrStream}};
  EXPECT_FALSE(OnConsole(spec, 0, 0, kStdoutStream));
  EXPECT_TRUE(OnConsole(spec, 0, 0, kStderrStream));
  EXPECT_FALSE(OnConsole(spec, 1, 1, kStdoutStream));
  EXPECT_FALSE(OnConsole(spec, 1, 1, kStderrStream));
  spec.tee.all = kStderrStream;  // tee wins over a redirect, per stream
  EXPECT_FALSE(OnConsole(spec, 1, 1, kStdoutStream));
  EXPECT_TRUE(OnConsole(spec, 1, 1, kStderrStream));
  // The local ranks filter applies to teed streams too.
  spec.local_ranks_filter = {0};
  EXPECT_FALSE(OnConsole(spec, 1, 1, kStderrStream));
}

}  // namespace
}  // namespace primus::agent
