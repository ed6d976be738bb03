#include "io/stoppable_commands.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "io/signal_channel.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/thread_signals.h"
#include "wait_for.h"

namespace primus::io {
namespace {

TEST(StoppableCommandsTest, KeepsOrderAndRunsInParallelWithTimeouts) {
  std::vector<StoppableCommand> commands;
  for (int i = 0; i < 6; ++i) {
    commands.push_back({{"sh", "-c", "cat; sleep 0.3; echo done " + std::to_string(i)},
                        {.timeout_s = 5, .stdin_data = "in" + std::to_string(i)}});
  }
  commands.push_back({{"sleep", "10"}, {.timeout_s = 0.5}});
  auto start = std::chrono::steady_clock::now();
  auto run = RunStoppable(commands, 8);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.results.size(), 7u);
  for (const auto& result : run.results) ASSERT_TRUE(result.ok()) << result.error().message;
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(run.results[i]->out, "in" + std::to_string(i) + "done " + std::to_string(i) + "\n");
  }
  EXPECT_TRUE(run.results[6]->timed_out);
  EXPECT_EQ(run.stop_signal, 0);
  EXPECT_LT(seconds, 3.0);  // in parallel, not 6 x 0.3 s + 0.5 s... and never the sleep's 10 s
}

int FilesStartingWith(const std::string& prefix) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DirName(prefix))) {
    if (entry.path().string().starts_with(prefix)) ++count;
  }
  return count;
}

// Ctrl-C (here SIGTERM) during ssh's host checks: the running commands end
// at once, the queued one never starts, and the signal is reported.
TEST(StoppableCommandsTest, ASignalStopsEveryRunningCommandAndStartsNoMore) {
  ScopedTempDir dir("stoppable");
  std::string started = dir.path() + "/started.";
  std::vector<StoppableCommand> commands(
      3, StoppableCommand{{"sh", "-c", "touch " + started + "$$; exec sleep 30"}, {.timeout_s = 60, .kill_grace_s = 1}});
  std::thread sender([&] {
    BlockAllSignalsInThisThread();  // the signal is the process's, read by RunStoppable
    // Once the two that run at a time have started (bounded: never forever).
    testing::WaitFor([&] { return FilesStartingWith(started) == 2; }, 30);
    ::kill(::getpid(), SIGTERM);
  });
  auto start = std::chrono::steady_clock::now();
  auto run = RunStoppable(commands, 2);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sender.join();
  EXPECT_EQ(run.stop_signal, SIGTERM);
  ASSERT_EQ(run.results.size(), 3u);
  for (const auto& result : run.results) {
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_TRUE(result->stopped);
  }
  EXPECT_EQ(run.results[0]->exit_code, 128 + SIGTERM);
  EXPECT_EQ(run.results[2]->exit_code, -1) << "the third command never started";
  EXPECT_LT(seconds, 5.0);
}

TEST(StoppableCommandsTest, ACommandThatCannotStartIsItsError) {
  StoppableRun run = RunStoppable({{{"no-such-command-primus-test"}, {}}, {{"true"}, {}}}, 2);
  ASSERT_EQ(run.results.size(), 2u);
  ASSERT_FALSE(run.results[0].ok());
  EXPECT_NE(run.results[0].error().message.find("no-such-command-primus-test"), std::string::npos);
  ASSERT_TRUE(run.results[1].ok());
  EXPECT_EQ(run.results[1]->exit_code, 0);
}

}  // namespace
}  // namespace primus::io
