// One node's agent end to end (agent/supervisor.h, through RunWorkers) with
// real processes: exit codes and signals pass through, teardown of peers
// (SIGTERM, SIGKILL after the grace), grandchildren and daemons killed,
// error-file root cause, hang watchdog, agent signals, console lines and
// filter.
#include "job/run_workers.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <thread>

#include "agent/agent_test_util.h"
#include "agent/supervisor.h"
#include "io/signal_channel.h"
#include "util/strings.h"

namespace primus::job {

using agent::LaunchSpec;
using agent::LineStamp;
using agent::RunResult;
using agent::kStderrStream;
using agent::kStdoutStream;

namespace {

using agent::testing::MakeTempDir;
using agent::testing::PidsInFile;
using agent::testing::ProcessAlive;
using agent::testing::RankLog;
using agent::testing::ShellSpec;
using agent::testing::Stopwatch;

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("supervisor"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  LaunchSpec Spec(int nproc, const std::string& script) { return ShellSpec(nproc, script, dir_ + "/logs"); }
  RunResult Run(const LaunchSpec& spec) {
    auto result = RunWorkers(spec);
    EXPECT_TRUE(result.ok()) << result.error().Format();
    return result.ok() ? *result : RunResult{};
  }
  std::string dir_;
};

TEST_F(SupervisorTest, SuccessIsZeroAndEveryRankHasItsLog) {
  RunResult result = Run(Spec(3, "echo rank $RANK of $WORLD_SIZE local $LOCAL_RANK"));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_FALSE(result.root_cause.has_value());
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(RankLog(result, 0, rank).find(" O rank " + std::to_string(rank) + " of 3 local " +
                                            std::to_string(rank) + "\n"),
              std::string::npos);
  }
}

TEST_F(SupervisorTest, WorkerExitsAreSeenEvenWhenAnotherThreadTakesSigchld) {
  // A thread with nothing blocked receives the process's SIGCHLDs; the
  // workers' pidfds still report their exits.
  sigset_t none;
  sigemptyset(&none);
  sigset_t previous;
  pthread_sigmask(SIG_SETMASK, &none, &previous);
  std::atomic<bool> stop{false};
  std::thread bystander([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  Stopwatch watch;
  RunResult result = Run(Spec(4, "exit 0"));
  stop = true;
  bystander.join();
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_LT(watch.Seconds(), 2);
}

TEST_F(SupervisorTest, WorkerExitCodePassesThroughAndPeersAreStopped) {
  Stopwatch watch;
  RunResult result = Run(Spec(3, "if [ $RANK = 1 ]; then echo failing; exit 7; fi; sleep 30"));
  EXPECT_LT(watch.Seconds(), 3);
  EXPECT_EQ(result.exit_code, 7);
  ASSERT_TRUE(result.root_cause.has_value());
  EXPECT_EQ(result.root_cause->rank, 1);
  EXPECT_EQ(result.root_cause->exit_code, 7);
  EXPECT_EQ(result.root_cause->signal, 0);
  EXPECT_TRUE(result.other_failures.empty());
}

TEST_F(SupervisorTest, WorkerSignalPassesThroughAs128PlusSignal) {
  RunResult result = Run(Spec(2, "if [ $RANK = 0 ]; then kill -SEGV $$; fi; sleep 30"));
  EXPECT_EQ(result.exit_code, 128 + SIGSEGV);
  ASSERT_TRUE(result.root_cause.has_value());
  EXPECT_EQ(result.root_cause->signal, SIGSEGV);
  EXPECT_EQ(result.root_cause->rank, 0);
}

TEST_F(SupervisorTest, EveryExitCodeAndSignalPassesThrough) {
  for (int code : {1, 2, 3, 42, 126, 127, 255}) {
    RunResult result = Run(Spec(1, "exit " + std::to_string(code)));
    EXPECT_EQ(result.exit_code, code);
    ASSERT_TRUE(result.root_cause.has_value());
    EXPECT_EQ(result.root_cause->exit_code, code);
  }
  for (int signal : {SIGKILL, SIGABRT, SIGSEGV, SIGBUS, SIGTERM, SIGINT, SIGUSR1}) {
    RunResult result = Run(Spec(1, "kill -" + std::to_string(signal) + " $$; sleep 5"));
    EXPECT_EQ(result.exit_code, 128 + signal) << io::SignalName(signal);
    ASSERT_TRUE(result.root_cause.has_value());
    EXPECT_EQ(result.root_cause->signal, signal);
  }
}

TEST_F(SupervisorTest, LogFileKeepsArrivalOrderAndRawBytes) {
  RunResult result = Run(Spec(1,
                              "echo first; sleep 0.05; echo second >&2; sleep 0.05; echo third; "
                              "printf 'bin\\000\\377\\r end\\n'; printf 'no newline at the end'"));
  EXPECT_EQ(result.exit_code, 0);
  std::vector<std::string> lines;
  for (const std::string& line : Split(RankLog(result, 0, 0), '\n')) {
    if (line.size() > LineStamp::kLength) lines.push_back(line.substr(LineStamp::kLength + 1));
  }
  std::vector<std::string> expected = {"O first", "E second", "O third", std::string("O bin\0\xff\r end", 12),
                                       "O no newline at the end"};
  EXPECT_EQ(lines, expected);
}

TEST_F(SupervisorTest, WorkerIgnoringSigtermIsKilledAfterTheGrace) {
  LaunchSpec spec = Spec(2, "if [ $RANK = 0 ]; then sleep 0.05; exit 1; fi; trap '' TERM; sleep 30");
  spec.term_timeout_s = 0.3;
  Stopwatch watch;
  RunResult result = Run(spec);
  double elapsed = watch.Seconds();
  EXPECT_GE(elapsed, 0.3);
  EXPECT_LT(elapsed, 2.5);
  EXPECT_EQ(result.exit_code, 1);
}

TEST_F(SupervisorTest, GrandchildrenAndDaemonsAreKilledAfterSuccess) {
  std::string pids = dir_ + "/pids";
  RunResult result = Run(Spec(2, "sleep 100 & echo $! >> " + pids + "; setsid sleep 101 & echo $! >> " + pids +
                                      "; exit 0"));
  EXPECT_EQ(result.exit_code, 0);
  std::vector<pid_t> started = PidsInFile(pids);
  ASSERT_EQ(started.size(), 4u);
  for (pid_t pid : started) EXPECT_FALSE(ProcessAlive(pid)) << pid;
}

TEST_F(SupervisorTest, DaemonsOfAFailedRunAreKilledWithTheWorkers) {
  std::string pids = dir_ + "/pids";
  RunResult result = Run(Spec(2, "if [ $RANK = 0 ]; then sleep 0.2; exit 3; fi; setsid sleep 100 & echo $! > " +
                                      pids + "; sleep 30"));
  EXPECT_EQ(result.exit_code, 3);
  std::vector<pid_t> started = PidsInFile(pids);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_FALSE(ProcessAlive(started[0]));
}

TEST_F(SupervisorTest, ErrorFileTimestampWinsOverDetectionOrder) {
  // Rank 1 records its exception first (timestamp 100 s ago) but exits only
  // when stopped; rank 0 fails fast without an error file.
  std::string script =
      "if [ $RANK = 0 ]; then sleep 0.3; exit 2; fi; "
      "printf '{\"message\": {\"message\": \"RuntimeError: first\", \"extraInfo\": "
      "{\"py_callstack\": \"Traceback: here\", \"timestamp\": \"%s\"}}}' $(( $(date +%s) - 100 )) "
      "> \"$TORCHELASTIC_ERROR_FILE\"; trap 'exit 5' TERM; sleep 30 & wait";
  RunResult result = Run(Spec(2, script));
  ASSERT_TRUE(result.root_cause.has_value());
  EXPECT_EQ(result.root_cause->rank, 1);
  EXPECT_EQ(result.root_cause->message, "RuntimeError: first");
  EXPECT_EQ(result.root_cause->exit_code, 5);
  EXPECT_EQ(result.exit_code, 5);
  ASSERT_EQ(result.other_failures.size(), 1u);
  EXPECT_EQ(result.other_failures[0].rank, 0);
}

TEST_F(SupervisorTest, HungWorkerIsReportedByRankAndStopped) {
  // Rank 1 keeps touching its heartbeat file; rank 0 goes silent.
  LaunchSpec spec = Spec(2,
                         "echo started; if [ $RANK = 1 ]; then "
                         "for i in 1 2 3 4 5 6 7 8 9 10; do touch \"$PRIMUS_HEARTBEAT_FILE\"; sleep 0.1; done; fi; "
                         "sleep 30");
  spec.hang_timeout_s = 0.4;
  spec.env["PATH"] = "/usr/bin:/bin";  // only used when unset; the test sets PATH below
  std::string saved_path = getenv("PATH");
  setenv("PATH", "/usr/bin:/bin", 1);  // no py-spy here
  ::testing::internal::CaptureStderr();
  Stopwatch watch;
  RunResult result = Run(spec);
  std::string log = ::testing::internal::GetCapturedStderr();
  setenv("PATH", saved_path.c_str(), 1);
  EXPECT_LT(watch.Seconds(), 3);
  ASSERT_TRUE(result.root_cause.has_value());
  EXPECT_TRUE(result.root_cause->hung);
  EXPECT_EQ(result.root_cause->rank, 0);
  EXPECT_EQ(result.exit_code, 128 + SIGTERM);
  EXPECT_NE(log.find("rank 0 (local rank 0, pid"), std::string::npos) << log;
  EXPECT_NE(log.find("hung: no output and no touch of its heartbeat file for 0.4 s"), std::string::npos) << log;
  // No py-spy here: gdb's stacks where gdb is installed, else no stack at all.
  EXPECT_TRUE(log.find("no stack tool found") != std::string::npos ||
              log.find("(native stacks of every thread, from gdb)") != std::string::npos)
      << log;
}

TEST_F(SupervisorTest, HangReportCarriesStacksFromPySpy) {
  std::string tools = dir_ + "/tools";
  ASSERT_TRUE(MakeDirs(tools).ok());
  ASSERT_TRUE(WriteFileAtomic(tools + "/py-spy", "#!/bin/sh\necho \"Thread 1 (idle): MainThread of pid $3\"\n", 0755).ok());
  std::string saved_path = getenv("PATH");
  setenv("PATH", (tools + ":/usr/bin:/bin").c_str(), 1);
  LaunchSpec spec = Spec(1, "sleep 30");
  spec.hang_timeout_s = 0.2;
  ::testing::internal::CaptureStderr();
  RunResult result = Run(spec);
  std::string log = ::testing::internal::GetCapturedStderr();
  setenv("PATH", saved_path.c_str(), 1);
  ASSERT_TRUE(result.root_cause.has_value());
  std::string stacks_file = result.log_dir + "/attempt_0/" + result.root_cause->host + ".rank0.stacks.txt";
  auto stacks = ReadFile(stacks_file);
  ASSERT_TRUE(stacks.ok()) << log;
  EXPECT_NE(stacks->find("Thread 1 (idle): MainThread of pid " + std::to_string(result.root_cause->pid)),
            std::string::npos);
  EXPECT_NE(log.find("Thread 1 (idle)"), std::string::npos);
}

TEST_F(SupervisorTest, SigintIsForwardedToTheWorkersAndTheExitIs130) {
  // Rank 0 signals the agent once rank 1 has its trap in place.
  std::string ready = dir_ + "/ready";
  LaunchSpec spec = Spec(2,
                         "trap 'echo got INT; exit 0' INT; if [ $RANK = 1 ]; then touch " + ready + "; else "
                         "while [ ! -e " + ready + " ]; do sleep 0.01; done; kill -INT $PPID; fi; "
                         "sleep 30 & wait");
  RunResult result = Run(spec);
  EXPECT_EQ(result.exit_code, 128 + SIGINT);
  EXPECT_EQ(result.agent_signal, SIGINT);
  EXPECT_NE(RankLog(result, 0, 0).find("O got INT"), std::string::npos);
  EXPECT_NE(RankLog(result, 0, 1).find("O got INT"), std::string::npos);
}

TEST_F(SupervisorTest, SecondSigintKillsAtOnce) {
  LaunchSpec spec = Spec(1, "trap '' INT TERM; kill -INT $PPID; sleep 0.2; kill -INT $PPID; sleep 30");
  spec.term_timeout_s = 30;
  Stopwatch watch;
  RunResult result = Run(spec);
  EXPECT_LT(watch.Seconds(), 3);
  EXPECT_EQ(result.exit_code, 128 + SIGINT);
}

TEST_F(SupervisorTest, SigusrIsForwardedAndNotFatal) {
  std::string ready = dir_ + "/ready";
  RunResult result = Run(Spec(2,
                              "trap 'echo got USR1' USR1; if [ $RANK = 1 ]; then touch " + ready + "; else "
                              "while [ ! -e " + ready + " ]; do sleep 0.01; done; kill -USR1 $PPID; fi; "
                              "sleep 2 & wait; echo after; exit 0"));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.agent_signal, 0);
  for (int rank = 0; rank < 2; ++rank) {
    std::string log = RankLog(result, 0, rank);
    EXPECT_NE(log.find("O got USR1"), std::string::npos) << log;
    EXPECT_NE(log.find("O after"), std::string::npos) << log;
  }
}

TEST_F(SupervisorTest, ConsoleHasPrefixedWholeLinesForTheFilteredRanksOnly) {
  LaunchSpec spec = Spec(3, "echo out $RANK; echo err $RANK >&2; head -c 200000 /dev/zero | tr '\\0' x; echo");
  spec.ranks_filter = {1, 2};
  spec.console_prefix = "<{rank}/{local_rank}/{node_rank} {stream}> ";
  ::testing::internal::CaptureStdout();
  RunResult result = Run(spec);
  std::string console = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(result.exit_code, 0);
  std::string long_line(200000, 'x');
  for (int rank = 1; rank <= 2; ++rank) {
    std::string r = std::to_string(rank);
    EXPECT_NE(console.find("<" + r + "/" + r + "/0 out> out " + r + "\n"), std::string::npos) << console.substr(0, 300);
    EXPECT_NE(console.find("<" + r + "/" + r + "/0 err> err " + r + "\n"), std::string::npos);
    EXPECT_NE(console.find("<" + r + "/" + r + "/0 out> " + long_line + "\n"), std::string::npos);
  }
  EXPECT_EQ(console.find("<0/"), std::string::npos);
  // Every console line is whole: it starts with a prefix.
  for (const std::string& line : Split(console.substr(0, console.size() - 1), '\n')) {
    EXPECT_EQ(line.front(), '<') << line.substr(0, 80);
  }
  // The file of the filtered-out rank still has everything.
  std::string rank0 = RankLog(result, 0, 0);
  EXPECT_NE(rank0.find(" O out 0\n"), std::string::npos);
  EXPECT_NE(rank0.find(" E err 0\n"), std::string::npos);
  EXPECT_NE(rank0.find(" O " + long_line + "\n"), std::string::npos);
}

TEST_F(SupervisorTest, RedirectedStreamsStayInTheFilesAndTeeShowsThemToo) {
  // torchrun's -r 0:1,1:3 --tee 1:2: local rank 0's stdout and rank 1's
  // stdout go only to the files; rank 1's stderr is teed back.
  LaunchSpec spec = Spec(3, "echo out $RANK; echo err $RANK >&2");
  spec.redirects.by_local_rank = {{0, kStdoutStream}, {1, kStdoutStream | kStderrStream}};
  spec.tee.by_local_rank = {{1, kStderrStream}};
  spec.local_ranks_filter = {0, 1};
  spec.console_prefix = "[{rank}] ";
  ::testing::internal::CaptureStdout();
  RunResult result = Run(spec);
  std::string console = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(console.find("[0] out 0"), std::string::npos) << console;
  EXPECT_NE(console.find("[0] err 0\n"), std::string::npos) << console;
  EXPECT_EQ(console.find("[1] out 1"), std::string::npos) << console;
  EXPECT_NE(console.find("[1] err 1\n"), std::string::npos) << console;
  EXPECT_EQ(console.find("[2]"), std::string::npos) << console;  // not in the local ranks filter
  for (int rank = 0; rank < 3; ++rank) {
    std::string log = RankLog(result, 0, rank), r = std::to_string(rank);
    EXPECT_NE(log.find(" O out " + r + "\n"), std::string::npos) << log;
    EXPECT_NE(log.find(" E err " + r + "\n"), std::string::npos) << log;
  }
}

TEST_F(SupervisorTest, StderrLinesCanGoToTheAgentsStderr) {
  LaunchSpec spec = Spec(2, "echo out $RANK; echo err $RANK >&2");
  spec.stderr_to_stderr = true;
  spec.console_prefix = "[{rank}] ";
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  RunResult result = Run(spec);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.exit_code, 0);
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    EXPECT_NE(out.find("[" + r + "] out " + r + "\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("err " + r), std::string::npos) << out;
    EXPECT_NE(err.find("[" + r + "] err " + r + "\n"), std::string::npos) << err;
    EXPECT_NE(RankLog(result, 0, rank).find(" E err " + r + "\n"), std::string::npos);
  }
}

}  // namespace
}  // namespace primus::job
