#include "agent/stdin_session.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace primus::agent {
namespace {

TEST(StdinSessionTest, ReadsOnlyTheTokenLine) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "0123abcd\nrest", 13), 13);
  ::close(fds[1]);
  auto token = ReadTokenLine(fds[0]);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "0123abcd");
  char rest[8] = {};
  EXPECT_EQ(::read(fds[0], rest, sizeof(rest)), 4);  // nothing after the line was consumed
  EXPECT_EQ(std::string(rest, 4), "rest");
  ::close(fds[0]);
}

TEST(StdinSessionTest, NoTokenIsAnErrorThatNeverShowsInput) {
  for (std::string input : {std::string(""), std::string("\n"), std::string(5000, 'x')}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    ::close(fds[1]);
    auto token = ReadTokenLine(fds[0]);
    ASSERT_FALSE(token.ok());
    EXPECT_EQ(token.error().code, ExitCode::kUnavailable);
    EXPECT_EQ(token.error().message.find("xxx"), std::string::npos);
    ::close(fds[0]);
  }
}

}  // namespace
}  // namespace primus::agent
