#include "io/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "util/strings.h"

namespace primus::io {
namespace {

// Everything `fd` gives until its end.
std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

// Runs `request` with its stdout into a pipe; what it printed (it must exit 0).
std::string Output(SpawnRequest request) {
  PipeEnds out;
  EXPECT_TRUE(MakePipe(&out));
  request.descriptors.push_back({out.write.get(), 1});
  auto child = SpawnProcess(request);
  out.write.Reset();
  EXPECT_TRUE(child.ok()) << (child.ok() ? "" : child.error().Format());
  if (!child.ok()) return "";
  std::string text = ReadAll(out.read.get());
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
  asked.kept_signals = {SIGHUP};
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
  EXPECT_EQ(child.error().code, ExitCode::kUnavailable);
  EXPECT_NE(child.error().message.find("cannot start /nonexistent/tool: execve: No such file"), std::string::npos)
      << child.error().message;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "nothing left to reap";
}

TEST(SpawnTest, RunsTheCommandWithItsEnvironmentAndPipes) {
  PipeEnds out, err;
  ASSERT_TRUE(MakePipe(&out) && MakePipe(&err));
  SpawnRequest request;
  request.executable = "/bin/sh";
  request.argv = {"sh", "-c", "echo \"$GREETING\"; echo oops >&2; exit 3"};
  request.environment = {"GREETING=hello", "PATH=/usr/bin:/bin"};
  request.descriptors = {{out.write.get(), 1}, {err.write.get(), 2}};
  auto pid = SpawnProcess(request);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  out.write.Reset();
  err.write.Reset();
  EXPECT_EQ(ReadAll(out.read.get()), "hello\n");
  EXPECT_EQ(ReadAll(err.read.get()), "oops\n");
  EXPECT_EQ(WaitForExit(pid->pid), 3);
}

TEST(SpawnTest, ChildGetsTheRequestedSignalMaskAndNoStrayFds) {
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR2);
  int stray = ::open("/dev/null", O_RDONLY);  // not close-on-exec on purpose
  SpawnRequest request;
  request.executable = "/bin/sh";
  // The shell's own mask and fds, before it starts anything.
  request.argv = {"sh", "-c", "exec grep -c -e 'SigBlk:.0000000000000800' /proc/self/status"};
  request.signal_mask = &blocked;
  // SIGUSR2 is signal 12: bit 11 -> 0x800.
  EXPECT_EQ(Output(request), "1\n");

  // No stray descriptor: only 0, 1, 2 and the one ls opens for the listing.
  request.executable = "/bin/ls";
  request.argv = {"ls", "/proc/self/fd"};
  request.signal_mask = nullptr;
  EXPECT_EQ(Output(request), "0\n1\n2\n3\n");
  ::close(stray);
}

TEST(SpawnTest, BindsTheChildToTheRequestedCpus) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int bound = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && bound < 4; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    ++bound;
    SpawnRequest request;
    request.executable = "/bin/sh";
    request.argv = {"sh", "-c", "exec grep Cpus_allowed_list /proc/self/status"};
    request.cpus = {cpu};
    EXPECT_EQ(Output(request), "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
  }
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&allowed, &after)) << "the agent's own affinity is untouched";
}

TEST(SpawnTest, UnusableCpusComeBackAsAnError) {
  SpawnRequest request;
  request.executable = "/bin/true";
  request.argv = {"true"};
  request.cpus = {kMaxCpus - 1};  // no such CPU here
  auto pid = SpawnProcess(request);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().code, ExitCode::kUnavailable);
  EXPECT_NE(pid.error().message.find("sched_setaffinity: Invalid argument"), std::string::npos)
      << pid.error().message;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
}

}  // namespace
}  // namespace primus::io
