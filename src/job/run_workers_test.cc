// RunWorkers end to end: restarts and their bookkeeping, signals during the
// backoff, launch errors, the environment the workers see.
#include "job/run_workers.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.h"

namespace primus::job {

using agent::LaunchSpec;

namespace {

using agent::testing::MakeTempDir;
using agent::testing::RankLog;
using agent::testing::ShellSpec;
using agent::testing::Stopwatch;

class RunWorkersTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("run-workers"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  LaunchSpec Spec(int nproc, const std::string& script) { return ShellSpec(nproc, script, dir_ + "/logs"); }
  std::string dir_;
};

TEST_F(RunWorkersTest, RestartsIncrementTheRestartCountAndKeepEachAttemptsLogs) {
  // Rank 1 fails a little later, so that rank 0 has printed before it is stopped.
  LaunchSpec spec = Spec(2,
                         "echo count=$TORCHELASTIC_RESTART_COUNT max=$TORCHELASTIC_MAX_RESTARTS; "
                         "[ $RANK = 1 ] && { sleep 0.2; exit 1; }; sleep 30");
  spec.max_restarts = 2;
  auto result = RunWorkers(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 1);
  EXPECT_EQ(result->restarts, 2);
  for (int attempt = 0; attempt <= 2; ++attempt) {
    for (int rank = 0; rank < 2; ++rank) {
      EXPECT_NE(RankLog(*result, attempt, rank).find("O count=" + std::to_string(attempt) + " max=2\n"),
                std::string::npos);
    }
  }
  ASSERT_TRUE(result->root_cause.has_value());
  EXPECT_EQ(result->root_cause->attempt, 2);
}

TEST_F(RunWorkersTest, ARestartCanSucceed) {
  LaunchSpec spec = Spec(2, "[ $TORCHELASTIC_RESTART_COUNT -ge 1 ] && exit 0; [ $RANK = 1 ] && exit 4; sleep 30");
  spec.max_restarts = 3;
  auto result = RunWorkers(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->restarts, 1);
}

TEST_F(RunWorkersTest, BackoffDoublesAndIsCapped) {
  LaunchSpec spec = Spec(1, "exit 1");
  spec.max_restarts = 3;
  spec.restart_backoff_s = 0.1;     // 0.1, then 0.2 -> 0.15, then 0.4 -> 0.15
  spec.max_restart_backoff_s = 0.15;
  Stopwatch watch;
  auto result = RunWorkers(spec);
  double elapsed = watch.Seconds();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->restarts, 3);
  EXPECT_GE(elapsed, 0.4);
  EXPECT_LT(elapsed, 2.0);
}

TEST_F(RunWorkersTest, SignalDuringTheBackoffStopsWithoutRestarting) {
  std::string ended = dir_ + "/ended";
  LaunchSpec spec = Spec(1, "touch " + ended + "; exit 1");
  spec.max_restarts = 5;
  spec.restart_backoff_s = 20;
  // The helper thread must not take signals meant for the agent (SIGTERM,
  // SIGCHLD): it starts with everything blocked.
  sigset_t all;
  sigfillset(&all);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  std::thread sender([&] {
    // The worker has failed: the agent is (about to be) in its 20 s backoff.
    if (agent::testing::WaitFor([&] { return PathExists(ended); }, 30)) ::kill(getpid(), SIGTERM);
  });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  Stopwatch watch;
  auto result = RunWorkers(spec);
  sender.join();
  ASSERT_TRUE(result.ok());
  EXPECT_LT(watch.Seconds(), 5);
  EXPECT_EQ(result->exit_code, 128 + SIGTERM);
  EXPECT_EQ(result->restarts, 0);
}

TEST_F(RunWorkersTest, SignalWhileStoppingTheFailedWorkersStopsWithoutRestarting) {
  // Rank 0 fails; rank 1 notes the agent's SIGTERM and goes on, so the agent
  // stays in its stopping phase until the signal to it arrives.
  // Rank 0 fails once rank 1 is ready to note the SIGTERM.
  std::string term = dir_ + "/term", ready = dir_ + "/ready";
  LaunchSpec spec = Spec(2, "if [ $RANK = 0 ]; then while [ ! -e " + ready + " ]; do sleep 0.02; done; exit 1; fi; "
                            "trap 'touch " + term + "' TERM; touch " + ready + "; while :; do sleep 0.05; done");
  spec.max_restarts = 1;
  spec.restart_backoff_s = 0.1;
  spec.term_timeout_s = 20;
  sigset_t all;
  sigfillset(&all);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  std::thread sender([&] {
    if (agent::testing::WaitFor([&] { return PathExists(term); }, 30)) ::kill(getpid(), SIGTERM);
  });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  auto result = RunWorkers(spec);
  sender.join();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 128 + SIGTERM) << "the stop asked for, not the failure's 1";
  EXPECT_EQ(result->restarts, 0) << "a SIGTERM while stopping is not lost to a restart";
  ASSERT_TRUE(result->root_cause.has_value()) << "the failure stays the root cause";
  EXPECT_EQ(result->root_cause->rank, 0);
}

TEST_F(RunWorkersTest, MissingExecutableFailsWithCode4BeforeAnythingStarts) {
  LaunchSpec spec = Spec(2, "");
  spec.argv = {"definitely-not-a-worker-binary"};
  auto result = RunWorkers(spec);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ExitCode::kUnavailable);
  EXPECT_NE(result.error().message.find("definitely-not-a-worker-binary"), std::string::npos);
  EXPECT_FALSE(PathExists(dir_ + "/logs"));
}

TEST_F(RunWorkersTest, PortInUseFailsWithCode4NamingThePort) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  LaunchSpec spec = Spec(1, "true");
  spec.master_port = ntohs(address.sin_port);
  auto result = RunWorkers(spec);
  ::close(listener);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ExitCode::kUnavailable);
  EXPECT_NE(result.error().message.find(std::to_string(spec.master_port)), std::string::npos);
}

TEST_F(RunWorkersTest, WorkersSeeTheirRankAndTheLaunchSettings) {
  LaunchSpec spec = Spec(2, "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT $TORCHELASTIC_RUN_ID "
                            "$EXTRA $PRIMUS_LAUNCH_TOKEN\"");
  spec.run_id = "unit-run";
  spec.env["EXTRA"] = "from-spec";
  auto result = RunWorkers(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->run_id, "unit-run");
  std::string port = std::to_string(result->master_port);
  EXPECT_NE(RankLog(*result, 0, 1).find("O 1 1 2 127.0.0.1 " + port + " unit-run from-spec "), std::string::npos);
}

}  // namespace
}  // namespace primus::job

namespace primus::job {
namespace {

std::vector<nlohmann::json> JsonLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line, nullptr, false));
  return lines;
}

class RunWorkersTelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = agent::testing::MakeTempDir("run-workers-telemetry"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(RunWorkersTelemetryTest, TheJobViewFollowsARestartToTheEnd) {
  LaunchSpec spec = agent::testing::ShellSpec(
      2,
      "echo \"{\\\"step\\\": $((RANK + 1)), \\\"step_time_s\\\": 0.1}\" >> \"$PRIMUS_METRICS_FILE\"; sleep 0.3; "
      "[ $TORCHELASTIC_RESTART_COUNT = 0 ] && [ $RANK = 1 ] && exit 3; exit 0",
      dir_ + "/logs");
  spec.max_restarts = 1;
  spec.restart_backoff_s = 0.2;
  spec.telemetry_interval_s = 0.05;
  auto result = RunWorkers(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 0);
  std::ifstream job_file(dir_ + "/logs/telemetry/job.json");
  nlohmann::json view = nlohmann::json::parse(job_file, nullptr, false);
  ASSERT_TRUE(view.is_object());
  EXPECT_EQ(view["job"]["state"], "succeeded");
  EXPECT_EQ(view["job"]["generation"], 1);
  EXPECT_EQ(view["job"]["restarts"], 1);
  EXPECT_EQ(view["job"]["step"], 1);  // the lowest rank's
  ASSERT_EQ(view["nodes"].size(), 1u);
  ASSERT_EQ(view["nodes"][0]["workers"].size(), 2u);
  EXPECT_EQ(view["nodes"][0]["workers"][1]["step"], 2);
  EXPECT_EQ(view["nodes"][0]["workers"][1]["state"], "exited");
  std::vector<std::string> states;
  for (const auto& line : JsonLines(dir_ + "/logs/telemetry/history.jsonl")) states.push_back(line["state"]);
  EXPECT_NE(std::find(states.begin(), states.end(), "restarting"), states.end());
  EXPECT_EQ(states.back(), "succeeded");
}

TEST_F(RunWorkersTelemetryTest, OffMeansNoFilesButWorkersStillGetTheirMetricsFile) {
  LaunchSpec spec = agent::testing::ShellSpec(1, "echo \"$PRIMUS_METRICS_FILE\"", dir_ + "/logs");
  spec.telemetry_interval_s = 0;
  auto result = RunWorkers(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_NE(agent::testing::RankLog(*result, 0, 0).find(".rank0.metrics.jsonl"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/logs/telemetry"));
}

}  // namespace
}  // namespace primus::job
