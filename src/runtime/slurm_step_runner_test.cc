// The root cause in srun's report (lines recorded from srun 22.05 on a real
// cluster), and RunSrunStep driving real processes: stderr passes through,
// the status is computed, signals sent to us reach the child.
#include "runtime/slurm_step_runner.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>

#include "io/signal_channel.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

// srun -N2 --ntasks-per-node=1 --kill-on-bad-exit=1 where node2's task
// exits 7 and node1's sleeps: srun exits 143.
const std::vector<std::string> kKillOnBadExit = {
    "srun: error: node2: task 1: Exited with exit code 7",
    "srun: launch/slurm: _step_signal: Terminating StepId=6.0",
    "slurmstepd-node1: error: *** STEP 6.0 ON node1 CANCELLED AT 2026-11-22T05:06:56 ***",
    "srun: error: node1: task 0: Terminated",
    "srun: Force Terminated StepId=6.0",
};

std::vector<SrunTaskEnd> Ends(const std::vector<std::string>& lines) {
  std::vector<SrunTaskEnd> ends;
  for (const std::string& line : lines) {
    if (auto end = ParseSrunTaskEnd(line)) ends.push_back(*end);
  }
  return ends;
}

TEST(SlurmStepRunnerTest, ParsesSrunsTaskEnds) {
  std::vector<SrunTaskEnd> ends = Ends(kKillOnBadExit);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].node, "node2");
  EXPECT_EQ(ends[0].tasks, "1");
  EXPECT_EQ(ends[0].exit_code, 7);
  EXPECT_EQ(ends[1].node, "node1");
  EXPECT_EQ(ends[1].exit_code, -1);
  EXPECT_EQ(ends[1].how, "Terminated");

  auto several = ParseSrunTaskEnd("srun: error: gpu-a07: tasks 0-1,4: Exited with exit code 1\n");
  ASSERT_TRUE(several.has_value());
  EXPECT_EQ(several->node, "gpu-a07");
  EXPECT_EQ(several->tasks, "0-1,4");
  EXPECT_EQ(several->exit_code, 1);

  for (const char* other : {"srun: error: Invalid generic resource (gres) specification",
                            "srun: error: node1: task x: Exited with exit code 1",
                            "srun: error: node1: task 0: Exited with exit code banana",
                            "[node1:0] srun: error: node1: task 0: Exited with exit code 3", "step ok"}) {
    EXPECT_FALSE(ParseSrunTaskEnd(other).has_value()) << other;
  }
}

TEST(SlurmStepRunnerTest, RootCauseIsTheFirstTaskEnd) {
  EXPECT_EQ(RootCauseStatus(143, Ends(kKillOnBadExit)), 7) << "not the SIGTERM srun sent to the others";
  EXPECT_EQ(RootCauseStatus(0, {}), 0);
  EXPECT_EQ(RootCauseStatus(1, {}), 1) << "srun failed before any task (no allocation)";
  // The first node to end was killed by a signal: srun's own status stands.
  EXPECT_EQ(RootCauseStatus(137, Ends({"srun: error: node1: task 0: Killed",
                                      "srun: error: node2: task 1: Exited with exit code 1"})),
            137);
}

TEST(SlurmStepRunnerTest, MissingSrunIsUnavailable) {
  Result<int> ran = RunSrunStep({"srun-that-does-not-exist"}, {});
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code, ExitCode::kUnavailable);
  EXPECT_NE(ran.error().message.find("srun-that-does-not-exist not found"), std::string::npos);
  EXPECT_NE(ran.error().hint.find("Slurm"), std::string::npos);
}

TEST(SlurmStepRunnerTest, RunsAProcessWithTheExtraEnvironmentAndReadsItsReport) {
  // A real process that reports like srun and exits like srun.
  Result<int> ran = RunSrunStep(
      {"sh", "-c",
       "test \"$PRIMUS_TEST_VALUE\" = 42 || exit 99; echo 'srun: error: n2: task 1: Exited with exit code 7' >&2; exit 143"},
      {{"PRIMUS_TEST_VALUE", "42"}});
  ASSERT_TRUE(ran.ok()) << ran.error().Format();
  EXPECT_EQ(*ran, 7);
}

TEST(SlurmStepRunnerTest, ForwardsSignalsSentToUs) {
  // The child sends SIGTERM to its parent (this test): the runner forwards it
  // to the child, which dies of it instead of sleeping.
  Result<int> ran = RunSrunStep({"sh", "-c", "kill -TERM $PPID; exec sleep 20"}, {});
  ASSERT_TRUE(ran.ok()) << ran.error().Format();
  EXPECT_EQ(*ran, 128 + SIGTERM);
}

TEST(SlurmStepRunnerTest, SrunStartsWithDefaultSignalsWhateverOursAre) {
  // A launcher that reads its signals through a SignalChannel (a task's,
  // around the runner's own) and ignores SIGPIPE: srun must get neither, or
  // it could not be stopped nor see a closed pipe.
  auto channel = io::SignalChannel::Open();
  ASSERT_TRUE(channel.ok());
  struct sigaction ignore {}, old_pipe {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  ScopedTempDir dir("srun-signals");
  std::string status_file = dir.path() + "/status";
  Result<int> ran = RunSrunStep({"sh", "-c", "exec cat /proc/self/status > \"$STATUS_FILE\""}, {{"STATUS_FILE", status_file}});
  sigaction(SIGPIPE, &old_pipe, nullptr);
  channel->reset();
  ASSERT_TRUE(ran.ok()) << ran.error().Format();
  ASSERT_EQ(*ran, 0);
  auto status = ReadFile(status_file);
  ASSERT_TRUE(status.ok());
  auto mask = [&](const std::string& field) -> uint64_t {
    for (const std::string& line : Split(*status, '\n')) {
      if (line.starts_with(field)) return std::stoull(std::string(Trim(line.substr(field.size()))), nullptr, 16);
    }
    ADD_FAILURE() << field << " missing";
    return ~uint64_t{0};
  };
  EXPECT_EQ(mask("SigBlk:"), 0u) << *status;
  EXPECT_EQ(mask("SigIgn:") & (uint64_t{1} << (SIGPIPE - 1)), 0u) << "SIGPIPE at its default: " << *status;
}

}  // namespace
}  // namespace primus::runtime
