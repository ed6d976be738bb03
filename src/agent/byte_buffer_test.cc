#include "agent/byte_buffer.h"

#include <gtest/gtest.h>

#include <string>

namespace primus::agent {
namespace {

TEST(ByteBufferTest, AppendsPiecesInOrderAndKeepsCapacityOnClear) {
  ByteBuffer buffer;
  buffer.Append("stamp ");
  buffer.Push('O');
  buffer.Append(std::string_view(" line\0with nul", 14));
  EXPECT_EQ(buffer.view(), std::string_view("stamp O line\0with nul", 21));
  size_t capacity = buffer.capacity();
  buffer.Clear();
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.capacity(), capacity);
}

TEST(ByteBufferTest, GrowsForLargeAppendsAndReleasesAfterwards) {
  ByteBuffer buffer;
  std::string big(3 << 20, 'x');
  buffer.Append(big);
  buffer.Append("y");
  EXPECT_EQ(buffer.size(), big.size() + 1);
  EXPECT_EQ(buffer.view().back(), 'y');
  buffer.Clear();
  buffer.ReleaseIfLarge(1 << 20);
  EXPECT_EQ(buffer.capacity(), 0u);
}

TEST(ByteBufferTest, ReserveThenCommitWritesInPlace) {
  ByteBuffer buffer;
  char* slot = buffer.Reserve(3);
  slot[0] = 'a';
  slot[1] = 'b';
  buffer.Commit(2);
  EXPECT_EQ(buffer.view(), "ab");
}

}  // namespace
}  // namespace primus::agent
