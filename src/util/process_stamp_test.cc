#include "util/process_stamp.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/log.h"

namespace primus {
namespace {

TEST(ProcessStampTest, ThisProcessIsAliveAndAnEndedOneIsGone) {
  ProcessStamp self = ThisProcess();
  EXPECT_EQ(self.pid, static_cast<int>(::getpid()));
  EXPECT_GT(self.start, 0u);
  EXPECT_EQ(CheckAlive(self), Liveness::kAlive);

  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(CheckAlive(ProcessStamp{self.host, static_cast<int>(child), 1, self.pid_namespace}), Liveness::kGone);
  // An ended process its parent has not reaped yet (a zombie) has ended too.
  pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  ASSERT_GT(zombie, 0);
  ProcessStamp zombie_stamp{self.host, static_cast<int>(zombie), 0, self.pid_namespace};
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // until it has exited
    gone = CheckAlive(zombie_stamp) == Liveness::kGone;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone);
  ASSERT_EQ(::waitpid(zombie, &status, 0), zombie);
  // A pid reused by another process: the start time tells them apart.
  EXPECT_EQ(CheckAlive(ProcessStamp{self.host, self.pid, self.start + 1, self.pid_namespace}), Liveness::kGone);
  // Another host's process, or one in another PID namespace (a container), cannot be checked here.
  EXPECT_EQ(CheckAlive(ProcessStamp{"elsewhere", self.pid, self.start, self.pid_namespace}), Liveness::kUnknown);
  EXPECT_EQ(CheckAlive(ProcessStamp{self.host, static_cast<int>(child), 1, "pid:[1]"}), Liveness::kUnknown);
}

TEST(ProcessStampTest, RoundTripsThroughJsonAndRefusesOddFields) {
  ProcessStamp self = ThisProcess();
  auto back = StampFromJson(StampToJson(self));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->host, self.host);
  EXPECT_EQ(back->pid, self.pid);
  EXPECT_EQ(back->start, self.start);
  EXPECT_EQ(back->pid_namespace, self.pid_namespace);
  EXPECT_FALSE(StampFromJson(nlohmann::json{{"host", "h"}, {"pid", "12"}}).has_value());
  EXPECT_FALSE(StampFromJson(nlohmann::json{{"pid", 12}}).has_value());
  EXPECT_FALSE(StampFromJson(nlohmann::json::array()).has_value());
}

}  // namespace
}  // namespace primus
