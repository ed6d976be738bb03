#include "io/spawn.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "util/strings.h"

namespace primus::io {
namespace {

// Runs `request` with its stdout into a pipe; what it printed.
std::string Output(SpawnRequest request) {
  PipeEnds out;
  EXPECT_TRUE(MakePipe(&out));
  request.descriptors.push_back({out.write.get(), 1});
  auto child = SpawnProcess(request);
  out.write.Reset();
  EXPECT_TRUE(child.ok()) << (child.ok() ? "" : child.error().Format());
  if (!child.ok()) return "";
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(out.read.get(), buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  EXPECT_EQ(WaitForExit(child->pid), 0);
  return text;
}

// The hex mask of one line of /proc/<pid>/status ("SigBlk:", "SigIgn:").
uint64_t StatusMask(const std::string& status, const std::string& field) {
  for (const std::string& line : Split(status, '\n')) {
    if (line.starts_with(field)) return std::stoull(std::string(Trim(line.substr(field.size()))), nullptr, 16);
  }
  ADD_FAILURE() << field << " not in " << status;
  return 0;
}

uint64_t Bit(int signal) { return uint64_t{1} << (signal - 1); }

SpawnRequest CatOwnStatus() {
  return {.executable = "/bin/cat", .argv = {"cat", "/proc/self/status"}, .environment = {}};
}

TEST(SpawnTest, AChildNeverInheritsOurBlockedSignalsOrIgnoredSigpipe) {
  // What a launcher reading its signals through a SignalChannel looks like.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGCHLD);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &previous), 0);
  struct sigaction ignore {}, old_pipe {}, old_hup {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  sigaction(SIGHUP, &ignore, &old_hup);

  std::string status = Output(CatOwnStatus());
  EXPECT_EQ(StatusMask(status, "SigBlk:"), 0u) << status;
  EXPECT_EQ(StatusMask(status, "SigIgn:") & (Bit(SIGPIPE) | Bit(SIGHUP)), 0u) << "defaults, not our SIG_IGN";

  // What the user asked for stays: nohup's SIGHUP, a mask given explicitly.
  SpawnRequest asked = CatOwnStatus();
  asked.ignored_signals = {SIGHUP};
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  asked.signal_mask = &usr1;
  status = Output(asked);
  EXPECT_EQ(StatusMask(status, "SigBlk:"), Bit(SIGUSR1)) << status;
  EXPECT_EQ(StatusMask(status, "SigIgn:") & (Bit(SIGPIPE) | Bit(SIGHUP)), Bit(SIGHUP)) << status;

  sigaction(SIGPIPE, &old_pipe, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

TEST(SpawnTest, OwnProcessGroupOrTheCallers) {
  SpawnRequest sleeper{.executable = "/bin/sleep", .argv = {"sleep", "30"}, .environment = {}};
  auto own = SpawnProcess(sleeper);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(::getpgid(own->pid), own->pid) << "a group of its own: a stop ends all it started";
  sleeper.group = ProcessGroup::kCallers;
  auto ours = SpawnProcess(sleeper);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(::getpgid(ours->pid), ::getpgrp()) << "in our group: a terminal's Ctrl-C reaches it";
  for (pid_t pid : {own->pid, ours->pid}) {
    ::kill(pid, SIGKILL);
    EXPECT_EQ(WaitForExit(pid), 128 + SIGKILL);
  }
}

TEST(SpawnTest, DescriptorsDirectoryAndEnvironmentAreTheRequests) {
  ::setenv("PRIMUS_SPAWN_TEST_OURS", "1", 1);
  SpawnRequest request{.executable = "/bin/sh",
                       .argv = {"sh", "-c", "pwd; echo \"$ONLY\"; echo \"${PRIMUS_SPAWN_TEST_OURS:-not ours}\""},
                       .environment = {"ONLY=this"},
                       .cwd = "/"};
  EXPECT_EQ(Output(request), "/\nthis\nnot ours\n") << "the request's environment, nothing of ours";
  ::unsetenv("PRIMUS_SPAWN_TEST_OURS");
}

TEST(SpawnTest, APidfdWhereTheKernelHasOne) {
  auto child = SpawnProcess({.executable = "/bin/true", .argv = {"true"}, .environment = {}});
  ASSERT_TRUE(child.ok());
  bool pidfd = child->pidfd.valid();
  EXPECT_EQ(WaitForExit(child->pid), 0);
  if (!pidfd) GTEST_SKIP() << "this kernel has no pidfd_open (Linux < 5.3)";
}

TEST(SpawnTest, AProgramThatCannotStartIsAnErrorNamingIt) {
  auto child = SpawnProcess({.executable = "/nonexistent/tool", .argv = {"tool"}, .environment = {}});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.error().code, ExitCode::kEnvironment);
  EXPECT_NE(child.error().message.find("cannot start tool"), std::string::npos) << child.error().message;
}

}  // namespace
}  // namespace primus::io
