// ps, logs -f, stop and history through the real binary, with two jobs of
// two users running at once from one directory: this user's (its log
// directory the agent's default, under $TMPDIR) and nobody's (its log
// directory in the shared ./output). Only this user's job is ever listed,
// followed or stopped; with no TARGET, the commands take it without asking.
// Needs root to start a job as another user (setpriv); skips without.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "run_process.h"
#include "start_process.h"
#include "text.h"
#include "tmux.h"
#include "util/files.h"
#include "util/log.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::Contains;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;

const char* kLoop =
    "import os, time\n"
    "for step in range(600):\n"
    "    print('step', step, 'of rank', os.environ['RANK'], flush=True)\n"
    "    time.sleep(0.2)\n";

class JobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to start a job as another user (nobody)";
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0777), 0);  // nobody's job writes its logs under ./output
  }
  void TearDown() override {
    for (pid_t pid : {ours_, theirs_}) {
      if (pid > 0) ::kill(pid, SIGKILL);
    }
  }
  ProcessOptions Options() const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.timeout_s = 120;
    options.env["TMPDIR"] = dir_.path() + "/tmp";  // our runs directory: ${TMPDIR}/primus-0
    options.env["HOME"] = dir_.path();
    return options;
  }
  nlohmann::json Ps(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"ps", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult listed = RunPrimus(args, Options());
    EXPECT_EQ(listed.exit_code, 0) << listed.all();
    auto parsed = nlohmann::json::parse(listed.out, nullptr, false);
    return parsed.is_discarded() ? nlohmann::json::array() : parsed;
  }
  testing::TempDir dir_;
  pid_t ours_ = -1, theirs_ = -1;
};

TEST_F(JobsTest, PsLogsStopAndHistoryShowAndTouchOnlyYourJob) {
  ASSERT_EQ(::mkdir((dir_.path() + "/output").c_str(), 0777), 0);
  ASSERT_EQ(::chmod((dir_.path() + "/output").c_str(), 0777), 0);
  ASSERT_EQ(::mkdir((dir_.path() + "/tmp").c_str(), 01777), 0);
  ASSERT_EQ(::chmod((dir_.path() + "/tmp").c_str(), 01777), 0);
  theirs_ = testing::StartProcess({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                   PRIMUS_BINARY, "direct", "--nproc-per-node", "1", "--telemetry-interval", "1",
                                   "--log-dir", dir_.path() + "/output/theirs/logs", "--", "run", "/usr/bin/python3",
                                   "-c", kLoop},
                                  dir_.path() + "/theirs.out", dir_.path() + "/theirs.err", Options());
  ours_ = testing::StartProcess({PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--telemetry-interval", "1", "--",
                                 "run", "/usr/bin/python3", "-c", kLoop},
                                dir_.path() + "/ours.out", dir_.path() + "/ours.err", Options());
  ASSERT_GT(theirs_, 0);
  ASSERT_GT(ours_, 0);
  std::string their_view = dir_.path() + "/output/theirs/logs/telemetry/job.json";
  ASSERT_TRUE(testing::WaitFor([&] { return PathExists(their_view) && Ps().size() == 1; }, 60))
      << testing::ReadOrEmpty(dir_.path() + "/ours.err") << testing::ReadOrEmpty(dir_.path() + "/theirs.err");

  // ps: ours, running, from here; theirs never.
  nlohmann::json jobs = Ps({"--all"});
  ASSERT_EQ(jobs.size(), 1u) << jobs.dump(2);
  EXPECT_EQ(jobs[0]["state"], "running");
  EXPECT_EQ(jobs[0]["cwd"], dir_.path());
  EXPECT_EQ(jobs[0]["world_size"], 2);
  EXPECT_TRUE(Contains(jobs[0].value("command", ""), "python3")) << jobs[0].dump();
  EXPECT_FALSE(Contains(jobs.dump(), "theirs")) << jobs.dump(2);
  std::string run_id = jobs[0]["run_id"];
  ProcessResult table = RunPrimus({"ps"}, Options());
  EXPECT_TRUE(Contains(table.out, run_id + " ")) << table.out;
  EXPECT_FALSE(Contains(table.out, "theirs")) << table.out;

  // logs -f with no TARGET follows ours, every rank merged, until it ends.
  pid_t follower = testing::StartProcess({PRIMUS_BINARY, "logs", "-f"}, dir_.path() + "/follow.out",
                                         dir_.path() + "/follow.err", Options());
  ASSERT_GT(follower, 0);
  std::string host = log::HostName();
  ASSERT_TRUE(testing::WaitFor([&] {
    std::string out = testing::ReadOrEmpty(dir_.path() + "/follow.out");
    return Contains(out, "[" + host + ":0] step") && Contains(out, "[" + host + ":1] step");
  }, 30)) << testing::ReadOrEmpty(dir_.path() + "/follow.err");

  // stop with no TARGET: ours, gracefully, recorded as stopped; theirs runs on.
  ProcessResult stopped = RunPrimus({"stop", "--json"}, Options());
  EXPECT_EQ(stopped.exit_code, 0) << stopped.all();
  auto stop_record = nlohmann::json::parse(stopped.out, nullptr, false);
  ASSERT_TRUE(stop_record.is_object()) << "one JSON object: " << stopped.out;
  EXPECT_EQ(stop_record["run_id"], run_id);
  EXPECT_EQ(stop_record["ended"], true);
  EXPECT_EQ(stop_record["state"], "stopped") << stopped.out;
  EXPECT_EQ(testing::WaitForExit(ours_, 30), 128 + SIGTERM);
  ours_ = -1;
  EXPECT_EQ(testing::WaitForExit(follower, 30), 0) << "logs -f ends with the job";
  EXPECT_EQ(::kill(theirs_, 0), 0) << "the other user's job is never stopped";

  ProcessResult history = RunPrimus({"history", "--json"}, Options());
  auto ran = nlohmann::json::parse(history.out, nullptr, false);
  ASSERT_TRUE(ran.is_array() && ran.size() == 1) << history.all();
  EXPECT_EQ(ran[0]["state"], "stopped");
  // Nothing of ours runs now: stop says so, and names no one else's job.
  ProcessResult again = RunPrimus({"stop"}, Options());
  EXPECT_EQ(again.exit_code, 4) << again.all();
  EXPECT_TRUE(Contains(again.err, "none of your jobs started from this directory is running")) << again.err;
  // logs of a finished job, one rank: every line is rank 1's.
  ProcessResult one = RunPrimus({"logs", run_id, "--rank", "1"}, Options());
  EXPECT_EQ(one.exit_code, 0) << one.all();
  EXPECT_TRUE(Contains(one.out, "[" + host + ":1] step 0 of rank 1")) << one.out;
  EXPECT_FALSE(Contains(one.out, ":0]")) << one.out;
}

// ps and logs -f on a real terminal (tmux, 80 x 24), as a user types them:
// ps fits the width (no line wraps), logs -f shows every rank's lines as they
// come, Ctrl-C leaves it and the job runs on, and a second logs -f ends by
// itself when the job is stopped.
class JobsTerminalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindExecutable("tmux").empty()) GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  }
  void TearDown() override {
    if (job_ > 0) ::kill(job_, SIGKILL);
  }
  testing::TempDir dir_;
  pid_t job_ = -1;
};

TEST_F(JobsTerminalTest, PsFitsTheTerminalAndLogsFollowsUntilCtrlCOrTheJobsEnd) {
  ProcessOptions options;
  options.cwd = dir_.path();
  options.env["TMPDIR"] = dir_.path();
  options.env["HOME"] = dir_.path();
  job_ = testing::StartProcess({PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--telemetry-interval", "1", "--",
                                "run", "/usr/bin/python3", "-c", kLoop},
                               dir_.path() + "/job.out", dir_.path() + "/job.err", options);
  ASSERT_GT(job_, 0);
  std::string run_id;
  ASSERT_TRUE(testing::WaitFor([&] {
    ProcessResult listed = RunPrimus({"ps", "--json"}, options);
    auto jobs = nlohmann::json::parse(listed.out, nullptr, false);
    if (!jobs.is_array() || jobs.empty() || jobs[0]["state"] != "running") return false;
    run_id = jobs[0]["run_id"];
    return true;
  }, 60)) << testing::ReadOrEmpty(dir_.path() + "/job.err");

  testing::Tmux tmux(dir_.path(), 80, 24);
  ASSERT_TRUE(tmux.ok()) << tmux.error();
  // The user's shell: primus-cli on the PATH, the job's TMPDIR and HOME.
  tmux.Type("export TMPDIR=" + dir_.path() + " HOME=" + dir_.path() + " PATH=" + DirName(PRIMUS_BINARY) + ":$PATH\n");
  tmux.Type("clear; primus-cli ps; echo ps-done\n");
  ASSERT_TRUE(testing::WaitFor([&] { return Contains(tmux.Screen(), "ps-done\n"); }, 20)) << tmux.Screen();
  std::string screen = tmux.JoinedScreen();
  EXPECT_TRUE(Contains(screen, "RUN ID")) << screen;
  EXPECT_TRUE(Contains(screen, run_id + " ")) << screen;
  EXPECT_TRUE(Contains(screen, "running")) << screen;
  for (const std::string& line : Split(screen, '\n')) {
    EXPECT_LE(line.size(), 80u) << "a line wider than the terminal wraps:\n" << line;
  }

  tmux.Type("clear; primus-cli logs -f\n");
  std::string host = log::HostName();
  ASSERT_TRUE(testing::WaitFor([&] {
    std::string now = tmux.Screen();
    return Contains(now, "[" + host + ":0] step") && Contains(now, "[" + host + ":1] step");
  }, 30)) << tmux.Screen();
  // Lines keep coming while it follows.
  std::string before = tmux.Screen();
  EXPECT_TRUE(testing::WaitFor([&] { return tmux.Screen() != before; }, 10)) << "logs -f follows";
  tmux.Keys("C-c");
  // The shell's prompt is back: the command ended; its status next.
  ASSERT_TRUE(testing::WaitFor([&] { return tmux.Format("#{pane_current_command}") == "sh"; }, 10)) << tmux.Screen();
  tmux.Type("echo logs-exit=$?\n");
  ASSERT_TRUE(testing::WaitFor([&] { return Contains(tmux.Screen(), "logs-exit="); }, 10)) << tmux.Screen();
  EXPECT_TRUE(Contains(tmux.Screen(), "logs-exit=130")) << "Ctrl-C leaves logs -f as it leaves any command\n"
                                                          << tmux.Screen();
  EXPECT_EQ(::kill(job_, 0), 0) << "the job runs on after logs -f was left";

  // Followed again, logs -f ends by itself when the job ends.
  tmux.Type("clear; primus-cli logs -f " + run_id + " > /dev/null; echo followed-exit=$?\n");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ProcessResult stopped = RunPrimus({"stop", run_id}, options);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.all();
  EXPECT_EQ(testing::WaitForExit(job_, 30), 128 + SIGTERM);
  job_ = -1;
  EXPECT_TRUE(testing::WaitFor([&] { return Contains(tmux.Screen(), "followed-exit=0"); }, 20)) << tmux.Screen();
}

}  // namespace
}  // namespace primus
