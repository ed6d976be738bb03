// The node agent's fault matrix, with real processes: what the agent does
// when a worker will not end. Every row is a fault a 1,000-GPU job meets, and
// the behaviour an operator relies on:
//
//   fault                                         expected                                     test
//   a worker stuck in teardown after the work     stopped after the exit grace, exit 6, its    StuckAtExit*
//     was done (another worker exited 0)            stacks kept, no restart
//   a remaining worker still printing             not stuck: waited for                        StillWorking*
//   exit grace 0                                  waits for every worker                       ExitGraceZero*
//   a hang, 4 workers, a slow stack tool          dumps in parallel: one bound for all         SlowStackTool*
//   a stack tool that never finishes              killed at the bound, the stop goes on        StackToolThatHangs*
//   SIGTERM to the agent while stacks are taken   stops at once (143), no dump left running    SigtermDuringStacks*
//   SIGHUP to the agent (the terminal closed)      workers stopped, exit 129                    Sighup*
//   the disk fills under the rank logs             said once, the workers' own code comes back  FullDisk*
//   a log directory that cannot be written         exit 4 naming it, nothing left running       UnwritableLogDirectory*
//
// Elsewhere in the matrix: worker crash, signal deaths and exit codes, peers
// that ignore SIGTERM, hangs and restarts (supervisor_test.cc); agent
// SIGKILL, SIGTERM/SIGINT/SIGHUP to the agent, busy ports
// (tests/integration/agent_process_test.cc); lost and silent nodes, a hang
// on one node of several (tests/integration/multinode_test.cc,
// multinode_fault_test.cc); control-channel attacks (io/message_socket_test.cc,
// job_coordinator_test.cc, job_member_test.cc); full disk and read-only workspaces, kills during
// checkpoint saves (tests/integration/train_test.cc).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mount.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "agent/agent_test_util.h"
#include "job/run_workers.h"
#include "util/error.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::job {

using agent::LaunchSpec;
using agent::RunResult;

namespace {

using agent::testing::MakeTempDir;
using agent::testing::ProcessAlive;
using agent::testing::ShellSpec;
using agent::testing::Contains;
using agent::testing::Stopwatch;

// A helper thread that signals the agent's own process must not take the
// signal itself (a thread that does not block it would, and die of it).
void BlockTerminatingSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, signal);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fault");
    saved_path_ = getenv("PATH");
  }
  void TearDown() override {
    setenv("PATH", saved_path_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }
  LaunchSpec Spec(int nproc, const std::string& script) { return ShellSpec(nproc, script, dir_ + "/logs"); }

  // Runs the launch with stderr captured into log_.
  RunResult Run(const LaunchSpec& spec) {
    ::testing::internal::CaptureStderr();
    auto result = RunWorkers(spec);
    log_ = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(result.ok()) << result.error().Format();
    return result.ok() ? *result : RunResult{};
  }

  // A py-spy on PATH that records its pid, sleeps `seconds`, then prints a
  // stack naming the pid it was asked about.
  void InstallStackTool(double seconds) {
    std::string tools = dir_ + "/tools";
    ASSERT_TRUE(MakeDirs(tools).ok());
    std::string script = "#!/bin/sh\necho $$ >> " + dir_ + "/dumps.pids\nsleep " + fmt::format("{:g}", seconds) +
                         "\necho \"Thread 1 (idle): MainThread of pid $3\"\n";
    ASSERT_TRUE(WriteFileAtomic(tools + "/py-spy", script, 0755).ok());
    setenv("PATH", (tools + ":/usr/bin:/bin").c_str(), 1);
  }
  void RemoveStackTools() { setenv("PATH", "/usr/bin:/bin", 1); }

  std::string Endings(const RunResult& result, int attempt = 0) {
    std::string attempt_dir = result.log_dir + "/attempt_" + std::to_string(attempt);
    for (const auto& entry : std::filesystem::directory_iterator(attempt_dir)) {
      if (entry.path().string().ends_with(".endings.log")) {
        auto text = ReadFile(entry.path().string());
        return text.ok() ? *text : "";
      }
    }
    return "<no endings log in " + attempt_dir + ">";
  }

  std::string dir_;
  std::string saved_path_;
  std::string log_;
};

// The README's main job hung this way: rank 1 printed "done" and exited 0,
// rank 0 deadlocked in torch's teardown, and the agent waited forever.
TEST_F(FaultInjectionTest, StuckAtExitIsStoppedAfterTheGraceWithItsOwnExitCodeAndNoRestart) {
  RemoveStackTools();
  LaunchSpec spec = Spec(2, "if [ $RANK = 1 ]; then echo done; exit 0; fi; echo tearing down; exec sleep 600");
  spec.exit_grace_s = 0.5;
  spec.max_restarts = 3;  // the work is done: a restart would redo nothing
  Stopwatch watch;
  RunResult result = Run(spec);
  EXPECT_LT(watch.Seconds(), 4) << log_;
  EXPECT_EQ(result.exit_code, static_cast<int>(ExitCode::kStuckAtExit)) << log_;
  EXPECT_FALSE(result.root_cause.has_value()) << "being stuck in teardown is not a failure of the work";
  EXPECT_EQ(result.restarts, 0);
  EXPECT_FALSE(PathExists(result.log_dir + "/attempt_1")) << "no restart after a stuck exit";
  EXPECT_TRUE(Contains(log_, "the work finished (rank 1 exited 0)")) << log_;
  EXPECT_TRUE(Contains(log_, "rank 0 (local rank 0, pid")) << log_;
  EXPECT_TRUE(Contains(log_, "stuck at exit")) << log_;
  EXPECT_TRUE(Contains(log_, "exit code 6")) << log_;
  EXPECT_TRUE(Contains(log_, "no stack tool found") || Contains(log_, "(native stacks of every thread, from gdb)"))
      << log_;
  std::string endings = Endings(result);
  EXPECT_TRUE(Contains(endings, "rank 0: stuck at exit: silent for 0.5 s after another rank exited 0")) << endings;
  EXPECT_TRUE(Contains(endings, "rank 1: exited 0")) << endings;
}

TEST_F(FaultInjectionTest, StuckAtExitKeepsTheStacksOfTheStuckRank) {
  InstallStackTool(0);
  LaunchSpec spec = Spec(2, "if [ $RANK = 0 ]; then exit 0; fi; exec sleep 600");
  spec.exit_grace_s = 0.3;
  RunResult result = Run(spec);
  EXPECT_EQ(result.exit_code, static_cast<int>(ExitCode::kStuckAtExit)) << log_;
  bool found = false;
  for (const auto& entry : std::filesystem::directory_iterator(result.log_dir + "/attempt_0")) {
    if (entry.path().string().ends_with(".rank1.stacks.txt")) {
      auto text = ReadFile(entry.path().string());
      found = text.ok() && Contains(*text, "Thread 1 (idle): MainThread of pid");
    }
  }
  EXPECT_TRUE(found) << "rank 1's stacks file, written before it was stopped";
  EXPECT_TRUE(Contains(log_, "stacks of rank 1, stuck at exit")) << log_;
}

TEST_F(FaultInjectionTest, StillWorkingAfterAPeerExitedIsNotStuck) {
  // Rank 0 goes on printing for 1.5 s after rank 1 finished: it is working
  // (a final evaluation, a save), not stuck, though the grace is 0.5 s.
  RemoveStackTools();
  LaunchSpec spec = Spec(2,
                         "if [ $RANK = 1 ]; then exit 0; fi; "
                         "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo saving $i; sleep 0.1; done");
  spec.exit_grace_s = 0.5;
  RunResult result = Run(spec);
  EXPECT_EQ(result.exit_code, 0) << log_;
  EXPECT_FALSE(Contains(log_, "stuck at exit")) << log_;
}

TEST_F(FaultInjectionTest, StillTouchingTheHeartbeatIsNotStuck) {
  RemoveStackTools();
  LaunchSpec spec = Spec(2,
                         "if [ $RANK = 1 ]; then exit 0; fi; "
                         "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do touch \"$PRIMUS_HEARTBEAT_FILE\"; sleep 0.1; done");
  spec.exit_grace_s = 0.5;
  RunResult result = Run(spec);
  EXPECT_EQ(result.exit_code, 0) << log_;
}

TEST_F(FaultInjectionTest, ExitGraceZeroWaitsForEveryWorker) {
  RemoveStackTools();
  LaunchSpec spec = Spec(2, "if [ $RANK = 1 ]; then exit 0; fi; sleep 1.2");
  spec.exit_grace_s = 0;
  Stopwatch watch;
  RunResult result = Run(spec);
  EXPECT_EQ(result.exit_code, 0) << log_;
  EXPECT_GE(watch.Seconds(), 1.1);
}

// Stacks of 4 hung workers with a tool that takes 1.5 s per dump: in
// parallel that is ~1.5 s, one after another it would be 6 s.
TEST_F(FaultInjectionTest, SlowStackToolRunsInParallelUnderOneBound) {
  InstallStackTool(1.5);
  LaunchSpec spec = Spec(4, "exec sleep 600");
  spec.hang_timeout_s = 0.3;
  Stopwatch watch;
  RunResult result = Run(spec);
  double seconds = watch.Seconds();
  ASSERT_TRUE(result.root_cause.has_value()) << log_;
  EXPECT_TRUE(result.root_cause->hung);
  EXPECT_LT(seconds, 4.5) << "dumps ran one after another? " << log_;
  EXPECT_GE(seconds, 1.5) << "the stop waited for the stacks";
  auto dumps = agent::testing::PidsInFile(dir_ + "/dumps.pids");
  EXPECT_EQ(dumps.size(), 4u);
  for (pid_t pid : dumps) EXPECT_FALSE(ProcessAlive(pid)) << "dump process " << pid << " left running";
  EXPECT_TRUE(Contains(log_, "stacks of hung rank")) << log_;
}

TEST_F(FaultInjectionTest, StackToolThatHangsIsKilledAtTheBoundAndTheStopGoesOn) {
  InstallStackTool(600);
  LaunchSpec spec = Spec(2, "exec sleep 600");
  spec.hang_timeout_s = 0.3;
  spec.stack_timeout_s = 1;
  Stopwatch watch;
  RunResult result = Run(spec);
  EXPECT_LT(watch.Seconds(), 4) << log_;
  ASSERT_TRUE(result.root_cause.has_value()) << log_;
  EXPECT_TRUE(result.root_cause->hung);
  EXPECT_TRUE(Contains(log_, "the stack tool did not finish within 1 s")) << log_;
  auto dumps = agent::testing::PidsInFile(dir_ + "/dumps.pids");
  EXPECT_EQ(dumps.size(), 2u);
  for (pid_t pid : dumps) EXPECT_FALSE(ProcessAlive(pid)) << "dump process " << pid << " left running";
}

TEST_F(FaultInjectionTest, SigtermDuringStacksStopsAtOnce) {
  InstallStackTool(600);
  // Rank 0 goes silent; the agent's stack tool then hangs. SIGTERM to the
  // agent must not wait behind it.
  LaunchSpec spec = Spec(1, "exec sleep 600");
  spec.hang_timeout_s = 0.3;
  spec.stack_timeout_s = 60;
  pid_t agent = getpid();
  std::thread terminator([&] {
    BlockTerminatingSignals();  // the signal must go to the agent's signalfd, not to this thread
    // Once a dump runs, the agent is taking stacks.
    for (int i = 0; i < 500 && agent::testing::PidsInFile(dir_ + "/dumps.pids").empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(agent, SIGTERM);
  });
  Stopwatch watch;
  RunResult result = Run(spec);
  terminator.join();
  EXPECT_LT(watch.Seconds(), 6) << log_;
  EXPECT_EQ(result.exit_code, 128 + SIGTERM) << log_;
  EXPECT_EQ(result.agent_signal, SIGTERM);
  EXPECT_TRUE(Contains(log_, "while taking stacks")) << log_;
  auto dumps = agent::testing::PidsInFile(dir_ + "/dumps.pids");
  ASSERT_EQ(dumps.size(), 1u);
  EXPECT_TRUE(agent::testing::WaitFor([&] { return !ProcessAlive(dumps[0]); }, 2)) << "the dump was left running";
}

TEST_F(FaultInjectionTest, SighupStopsTheWorkersAndTheExitIs129) {
  std::string started = dir_ + "/started";
  LaunchSpec spec = Spec(2, "touch " + started + "$RANK; exec sleep 600");
  pid_t agent = getpid();
  std::thread hangup([&] {
    BlockTerminatingSignals();
    agent::testing::WaitFor([&] { return PathExists(started + "0") && PathExists(started + "1"); }, 5);
    ::kill(agent, SIGHUP);
  });
  Stopwatch watch;
  RunResult result = Run(spec);
  hangup.join();
  EXPECT_LT(watch.Seconds(), 4) << log_;
  EXPECT_EQ(result.exit_code, 128 + SIGHUP) << log_;
  EXPECT_EQ(result.agent_signal, SIGHUP);
  EXPECT_FALSE(result.root_cause.has_value());
}

// Rank 0's log file is /dev/full: every write fails with ENOSPC, as on a
// full disk. The agent says so once, keeps draining the worker's output (so
// the worker never blocks on a full pipe), and returns the worker's own code.
TEST_F(FaultInjectionTest, FullDiskForTheLogsIsSaidOnceAndTheWorkersOwnCodeComesBack) {
  RemoveStackTools();
  LaunchSpec spec = Spec(1, "i=0; while [ $i -lt 2000 ]; do echo line $i of output that goes nowhere; i=$((i+1)); done; exit 3");
  // A real full disk: a 16 KiB file system under the log directory.
  std::string logs = dir_ + "/logs";
  ASSERT_TRUE(MakeDirs(logs).ok());
  if (::mount("tmpfs", logs.c_str(), "tmpfs", 0, "size=16k,mode=0700") != 0) {
    GTEST_SKIP() << "mounting a small tmpfs (a full disk) needs root: " << std::strerror(errno);
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{logs};
  Stopwatch watch;
  RunResult result = Run(spec);
  EXPECT_LT(watch.Seconds(), 5) << log_;
  EXPECT_EQ(result.exit_code, 3) << log_;
  // Said once for the rank's log (not once per line), and once for each
  // other file the agent could not write (the endings log, the job view).
  size_t said = 0, for_the_log = 0;
  for (size_t at = 0; (at = log_.find("No space left on device", at)) != std::string::npos; ++at) ++said;
  for (size_t at = 0; (at = log_.find("cannot write log file", at)) != std::string::npos; ++at) ++for_the_log;
  EXPECT_EQ(for_the_log, 1u) << log_;
  EXPECT_GE(said, 1u) << log_;
  EXPECT_LE(said, 3u) << "a full disk is said once per file, not once per line\n" << log_;
}

// A link planted where an earlier run's log was is neither followed nor
// truncated: the run goes to a fresh directory of its own.
TEST_F(FaultInjectionTest, ALinkPlantedInAReusedLogDirectoryIsNeverWrittenThrough) {
  std::string victim = dir_ + "/victim";
  ASSERT_TRUE(WriteFileAtomic(victim, "precious\n", 0644).ok());
  std::string attempt_dir = dir_ + "/logs/attempt_0";
  ASSERT_TRUE(MakeDirs(attempt_dir, 0700).ok());
  ASSERT_EQ(::chmod((dir_ + "/logs").c_str(), 0700), 0);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string short_host = Split(host, '.')[0];
  ASSERT_EQ(::symlink(victim.c_str(), (attempt_dir + "/" + short_host + ".rank0.log").c_str()), 0);
  RunResult result = Run(Spec(1, "echo overwritten; exit 3"));
  EXPECT_EQ(result.exit_code, 3) << log_;
  EXPECT_EQ(*ReadFile(victim), "precious\n");
  EXPECT_NE(result.log_dir, dir_ + "/logs") << "a fresh directory, not the one with the link";
  EXPECT_TRUE(result.log_dir.starts_with(dir_ + "/logs/")) << result.log_dir;
  auto log = ReadFile(result.log_dir + "/attempt_0/" + short_host + ".rank0.log");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_TRUE(Contains(*log, "overwritten"));
}

TEST_F(FaultInjectionTest, UnwritableLogDirectoryIsExit4NamingItWithNothingLeftRunning) {
  LaunchSpec spec = Spec(2, "exec sleep 600");
  spec.log_dir = "/proc/self/primus-logs";  // /proc takes no new directories, even from root
  ::testing::internal::CaptureStderr();
  auto result = RunWorkers(spec);
  log_ = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ExitCode::kUnavailable);
  EXPECT_TRUE(Contains(result.error().message, "/proc/self/primus-logs")) << result.error().message;
}

}  // namespace
}  // namespace primus::job
