#include "io/signal_channel.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

namespace primus::io {
namespace {

TEST(SignalChannelTest, NamesSignals) {
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
}

TEST(SignalChannelTest, DeliversBlockedSignalsAsEventsAndRestoresTheMask) {
  sigset_t before;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  {
    auto channel = SignalChannel::Open();
    ASSERT_TRUE(channel.ok());
    EXPECT_FALSE((*channel)->Read().has_value());
    ::kill(getpid(), SIGUSR1);
    ::kill(getpid(), SIGPIPE);  // blocked, consumed on close: must not kill the test
    auto info = (*channel)->Read();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(static_cast<int>(info->ssi_signo), SIGUSR1);
    EXPECT_EQ(static_cast<int>(info->ssi_pid), getpid());
  }
  sigset_t after;
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_EQ(sigismember(&after, SIGUSR1), sigismember(&before, SIGUSR1));
  EXPECT_EQ(sigismember(&after, SIGCHLD), sigismember(&before, SIGCHLD));
}

TEST(SignalChannelTest, LeavesIgnoredSignalsIgnored) {
  signal(SIGHUP, SIG_IGN);
  {
    auto channel = SignalChannel::Open();
    ASSERT_TRUE(channel.ok());
    EXPECT_TRUE((*channel)->WasIgnored(SIGHUP));
    EXPECT_FALSE((*channel)->WasIgnored(SIGINT));
    ::kill(getpid(), SIGHUP);
    EXPECT_FALSE((*channel)->Read().has_value());
  }
  signal(SIGHUP, SIG_DFL);
}

}  // namespace
}  // namespace primus::io
