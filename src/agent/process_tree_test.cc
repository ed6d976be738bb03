#include "agent/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "io/spawn.h"
#include "io/unique_fd.h"

namespace primus::agent {
namespace {

TEST(ProcessTreeTest, SubreaperAdoptsOrphansAndDescendantsAreFound) {
  ASSERT_TRUE(BecomeSubreaper().ok());
  int flag = 0;
  prctl(PR_GET_CHILD_SUBREAPER, &flag);
  EXPECT_EQ(flag, 1);

  io::PipeEnds out;
  ASSERT_TRUE(io::MakePipe(&out));
  io::SpawnRequest request;
  request.executable = "/bin/sh";
  // A child in the group, a setsid'd daemon, and the shell exits: both orphans
  // come to us.
  request.argv = {"sh", "-c", "sleep 30 & setsid sleep 31 & echo ready; exit 0"};
  request.descriptors = {{out.write.get(), 1}};
  auto shell = io::SpawnProcess(request);
  ASSERT_TRUE(shell.ok());
  out.write.Reset();
  char buffer[16];
  ASSERT_GT(::read(out.read.get(), buffer, sizeof(buffer)), 0);
  int status;
  waitpid(shell->pid, &status, 0);

  // setsid runs after "ready": wait until the daemon leads its own group.
  std::vector<ProcessInfo> found;
  auto daemon_started = [&] {
    return std::any_of(found.begin(), found.end(),
                       [](const ProcessInfo& p) { return p.process_group == p.pid; });
  };
  for (int i = 0; i < 400 && !(found.size() == 2 && daemon_started()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    found = ListDescendants(getpid());
  }
  ASSERT_EQ(found.size(), 2u);
  bool saw_group_member = false, saw_daemon = false;
  for (const ProcessInfo& process : found) {
    if (process.process_group == shell->pid) saw_group_member = true;
    if (process.process_group == process.pid) saw_daemon = true;  // setsid made it a leader
  }
  EXPECT_TRUE(saw_group_member);
  EXPECT_TRUE(saw_daemon);

  EXPECT_EQ(SignalAll(found, SIGKILL), 2);
  for (const ProcessInfo& process : found) EXPECT_EQ(waitpid(process.pid, &status, 0), process.pid);
  EXPECT_TRUE(ListDescendants(getpid()).empty());
  RestoreSubreaper();
  prctl(PR_GET_CHILD_SUBREAPER, &flag);
  EXPECT_EQ(flag, 0);
}

TEST(ProcessTreeTest, StatusValuesAreReadByName) {
  EXPECT_EQ(ProcessStatusValue(getpid(), "PPid"), std::to_string(getppid()));
  EXPECT_TRUE(ProcessStatusValue(getpid(), "Uid").starts_with(std::to_string(getuid()) + "\t"));
  EXPECT_EQ(ProcessStatusValue(getpid(), "SigCgt").size(), 16u);  // a 64-bit mask in hex
  EXPECT_EQ(ProcessStatusValue(getpid(), "NoSuchLine"), "");
  EXPECT_EQ(ProcessStatusValue(getpid(), "Pid"), std::to_string(getpid())) << "not PPid's or TracerPid's line";
}

}  // namespace
}  // namespace primus::agent
