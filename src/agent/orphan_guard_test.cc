#include "agent/orphan_guard.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "io/spawn.h"

namespace primus::agent {
namespace {

// Alive and not a zombie (a zombie is dead, only waiting for its reaper).
bool Alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::string stat;
  FILE* file = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (file == nullptr) return false;
  char buffer[512] = {};
  size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, file);
  std::fclose(file);
  stat.assign(buffer, n);
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

bool WaitGone(pid_t pid, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid || !Alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

pid_t StartSleeper(const std::string& token_entry) {
  io::SpawnRequest request;
  request.executable = "/bin/sleep";
  request.argv = {"sleep", "30"};
  request.environment = {token_entry};
  auto child = io::SpawnProcess(request);
  EXPECT_TRUE(child.ok());
  return child.ok() ? child->pid : -1;
}

TEST(OrphanGuardTest, DisarmedGuardExitsAndKillsNothing) {
  std::string token = "PRIMUS_LAUNCH_TOKEN=test-disarm-" + std::to_string(getpid());
  pid_t sleeper = StartSleeper(token);
  pid_t guard_pid;
  {
    auto guard = OrphanGuard::Start(token);
    ASSERT_TRUE(guard.ok());
    guard_pid = (*guard)->pid();
    EXPECT_TRUE(Alive(guard_pid));
    (*guard)->WatchGroup(sleeper);
  }
  EXPECT_TRUE(WaitGone(guard_pid, std::chrono::seconds(2)));
  EXPECT_TRUE(Alive(sleeper));
  ::kill(sleeper, SIGKILL);
  waitpid(sleeper, nullptr, 0);
}

TEST(OrphanGuardTest, KillsWatchedGroupsAndTokenCarriersWhenTheAgentVanishes) {
  std::string token = "PRIMUS_LAUNCH_TOKEN=test-vanish-" + std::to_string(getpid());
  pid_t in_group = StartSleeper(token);
  pid_t other = StartSleeper("PRIMUS_LAUNCH_TOKEN=somebody-else");
  // The "agent" is a forked child that starts the guard, reports, then dies
  // without disarming it (as if SIGKILLed).
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t agent = fork();
  if (agent == 0) {
    auto guard = OrphanGuard::Start(token);
    if (!guard.ok()) _exit(1);
    (*guard)->WatchGroup(in_group);
    pid_t guard_pid = (*guard)->pid();
    ssize_t ignored = write(report[1], &guard_pid, sizeof(guard_pid));
    (void)ignored;
    _exit(0);  // no destructor: the guard is never disarmed
  }
  pid_t guard_pid = 0;
  ASSERT_EQ(read(report[0], &guard_pid, sizeof(guard_pid)), static_cast<ssize_t>(sizeof(guard_pid)));
  waitpid(agent, nullptr, 0);
  EXPECT_TRUE(WaitGone(in_group, std::chrono::seconds(1)));
  EXPECT_TRUE(WaitGone(guard_pid, std::chrono::seconds(1)));
  EXPECT_TRUE(Alive(other));
  ::kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
  close(report[0]);
  close(report[1]);
}

}  // namespace
}  // namespace primus::agent
