#include "agent/process_spawner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/unique_fd.h"

namespace primus::agent {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ProcessSpawnerTest, RunsTheCommandWithItsEnvironmentAndPipes) {
  io::PipeEnds out, err;
  ASSERT_TRUE(io::MakePipe(&out) && io::MakePipe(&err));
  SpawnRequest request;
  request.executable = "/bin/sh";
  request.argv = {"sh", "-c", "echo \"$GREETING\"; echo oops >&2; exit 3"};
  request.env = {"GREETING=hello", "PATH=/usr/bin:/bin"};
  request.stdout_fd = out.write.get();
  request.stderr_fd = err.write.get();
  auto pid = SpawnProcess(request);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  out.write.Reset();
  err.write.Reset();
  EXPECT_EQ(ReadAll(out.read.get()), "hello\n");
  EXPECT_EQ(ReadAll(err.read.get()), "oops\n");
  EXPECT_EQ(WaitExit(*pid), 3);
}

TEST(ProcessSpawnerTest, ChildLeadsItsOwnProcessGroup) {
  SpawnRequest request;
  request.executable = "/bin/sleep";
  request.argv = {"sleep", "5"};
  auto pid = SpawnProcess(request);
  ASSERT_TRUE(pid.ok());
  EXPECT_EQ(getpgid(*pid), *pid);
  kill(*pid, SIGKILL);
  EXPECT_EQ(WaitExit(*pid), 128 + SIGKILL);
}

TEST(ProcessSpawnerTest, ExecFailureComesBackAsAnErrorWithErrno) {
  SpawnRequest request;
  request.executable = "/nonexistent/worker";
  request.argv = {"worker"};
  auto pid = SpawnProcess(request);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().code, ExitCode::kEnvironment);
  EXPECT_NE(pid.error().message.find("execve"), std::string::npos);
  EXPECT_NE(pid.error().message.find("No such file"), std::string::npos);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // nothing left to reap
}

TEST(ProcessSpawnerTest, ChildGetsTheRequestedSignalMaskAndNoStrayFds) {
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR2);
  int stray = ::open("/dev/null", O_RDONLY);  // not close-on-exec on purpose
  io::PipeEnds out;
  ASSERT_TRUE(io::MakePipe(&out));
  SpawnRequest request;
  request.executable = "/bin/sh";
  // The shell's own mask and fds, before it starts anything.
  request.argv = {"sh", "-c", "exec grep -c -e 'SigBlk:.0000000000000800' /proc/self/status"};
  request.stdout_fd = out.write.get();
  request.signal_mask = &blocked;
  auto pid = SpawnProcess(request);
  ASSERT_TRUE(pid.ok());
  out.write.Reset();
  std::string output = ReadAll(out.read.get());
  WaitExit(*pid);
  ::close(stray);
  // SIGUSR2 is signal 12: bit 11 -> 0x800.
  EXPECT_EQ(output, "1\n");

  // No stray descriptor: only 0, 1, 2 and the one ls opens for the listing.
  int stray_again = ::open("/dev/null", O_RDONLY);
  io::PipeEnds listing;
  ASSERT_TRUE(io::MakePipe(&listing));
  request.executable = "/bin/ls";
  request.argv = {"ls", "/proc/self/fd"};
  request.stdout_fd = listing.write.get();
  request.signal_mask = nullptr;
  auto ls = SpawnProcess(request);
  ASSERT_TRUE(ls.ok());
  listing.write.Reset();
  EXPECT_EQ(ReadAll(listing.read.get()), "0\n1\n2\n3\n");
  WaitExit(*ls);
  ::close(stray_again);
}

TEST(ProcessSpawnerTest, BindsTheChildToTheRequestedCpus) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int bound = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && bound < 4; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    ++bound;
    io::PipeEnds out;
    ASSERT_TRUE(io::MakePipe(&out));
    SpawnRequest request;
    request.executable = "/bin/sh";
    request.argv = {"sh", "-c", "exec grep Cpus_allowed_list /proc/self/status"};
    request.stdout_fd = out.write.get();
    request.cpus = {cpu};
    auto pid = SpawnProcess(request);
    ASSERT_TRUE(pid.ok()) << pid.error().message;
    out.write.Reset();
    EXPECT_EQ(ReadAll(out.read.get()), "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
    EXPECT_EQ(WaitExit(*pid), 0);
  }
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&allowed, &after)) << "the agent's own affinity is untouched";
}

TEST(ProcessSpawnerTest, UnusableCpusComeBackAsAnError) {
  SpawnRequest request;
  request.executable = "/bin/true";
  request.argv = {"true"};
  request.cpus = {kMaxCpus - 1};  // no such CPU here
  auto pid = SpawnProcess(request);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().code, ExitCode::kEnvironment);
  EXPECT_NE(pid.error().message.find("sched_setaffinity: Invalid argument"), std::string::npos)
      << pid.error().message;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
}

}  // namespace
}  // namespace primus::agent
