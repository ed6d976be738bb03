// The node agent as a separate process (`primus-cli direct -- run CMD`): what
// only shows from outside — SIGKILL of the agent leaving no survivor, signals sent to it the
// way a terminal or Slurm sends them, exit codes of launch errors.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "run_process.h"
#include "start_process.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::ProcessOptions;
using testing::StartProcess;
using testing::WaitFor;
using testing::WaitForExit;

// Live (non-zombie) processes whose command line contains `marker`.
std::vector<pid_t> ProcessesMatching(const std::string& marker) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    auto pid = ParseInt(entry->d_name);
    if (!pid || *pid == getpid()) continue;
    std::string base = std::string("/proc/") + entry->d_name;
    auto cmdline = ReadFile(base + "/cmdline");
    if (!cmdline.ok() || cmdline->find(marker) == std::string::npos) continue;
    auto stat = ReadFile(base + "/stat");
    if (!stat.ok()) continue;
    size_t close = stat->rfind(')');
    if (close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z') continue;
    found.push_back(static_cast<pid_t>(*pid));
  }
  closedir(proc);
  return found;
}

class AgentProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/primus-agent-process-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override {
    // Whatever a failed test left behind carries the directory in its command line.
    for (pid_t pid : ProcessesMatching(dir_)) kill(pid, SIGKILL);
    std::filesystem::remove_all(dir_);
  }
  std::string Script(const std::string& body) {
    std::string path = dir_ + "/worker.sh";
    EXPECT_TRUE(WriteFileAtomic(path, "#!/bin/sh\n" + body, 0755).ok());
    return path;
  }
  // primus-cli direct [flags] -- run COMMAND, with no user configuration.
  pid_t StartAgent(std::vector<std::string> flags, const std::vector<std::string>& command) {
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--log-dir", dir_ + "/logs"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "run"});
    argv.insert(argv.end(), command.begin(), command.end());
    ProcessOptions options;
    options.cwd = dir_;
    options.env["HOME"] = dir_;
    options.env["NO_COLOR"] = "1";
    return StartProcess(argv, dir_ + "/stdout", dir_ + "/stderr", options);
  }
  std::string Stderr() { return ReadFile(dir_ + "/stderr").ok() ? *ReadFile(dir_ + "/stderr") : ""; }
  size_t LinesIn(const std::string& path) {
    auto text = ReadFile(path);
    return text.ok() ? Split(Trim(*text), '\n').size() * !Trim(*text).empty() : 0;
  }
  std::string dir_;
};

TEST_F(AgentProcessTest, SigkillOfTheAgentLeavesNoSurvivorWithinOneSecond) {
  // Each worker starts: a child in its group, a setsid'd daemon, and a
  // double-forked setsid'd daemon (re-parented, its own session), records
  // them, then sleeps. Every process has the test directory in its command line.
  std::string pids = dir_ + "/pids";
  std::string script = Script(
      "sh -c 'sleep 100; : " + dir_ + "' & echo $! >> " + pids + "\n"
      "setsid sh -c 'sleep 100; : " + dir_ + "' & echo $! >> " + pids + "\n"
      "( setsid sh -c 'echo $$ >> " + pids + "; sleep 100; : " + dir_ + "' & )\n"
      "echo $$ >> " + pids + "\n"
      "sleep 100\n");
  pid_t agent = StartAgent({"--nproc-per-node", "2"}, {"/bin/sh", script});
  ASSERT_GT(agent, 0);
  ASSERT_TRUE(WaitFor([&] { return LinesIn(pids) == 8; }, 10)) << Stderr();
  EXPECT_GE(ProcessesMatching(dir_).size(), 8u);

  auto killed_at = std::chrono::steady_clock::now();
  kill(agent, SIGKILL);
  EXPECT_EQ(WaitForExit(agent, 5), 128 + SIGKILL);
  bool all_gone = WaitFor([&] { return ProcessesMatching(dir_).empty(); }, 2);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  EXPECT_TRUE(all_gone) << ProcessesMatching(dir_).size() << " survivors";
  EXPECT_LT(seconds, 1.0);
  EXPECT_NE(Stderr().find("[primus-guard] the agent exited without stopping its workers"), std::string::npos)
      << Stderr();
}

TEST_F(AgentProcessTest, SigtermToTheAgentStopsTheWorkersAndExits143) {
  std::string ready = dir_ + "/ready";
  std::string script = Script("trap 'echo stopping; exit 0' TERM; touch " + ready + ".$RANK; sleep 100 & wait\n");
  pid_t agent = StartAgent({"--nproc-per-node", "2"}, {"/bin/sh", script});
  ASSERT_TRUE(WaitFor([&] { return PathExists(ready + ".0") && PathExists(ready + ".1"); }, 10));
  auto sent_at = std::chrono::steady_clock::now();
  kill(agent, SIGTERM);
  EXPECT_EQ(WaitForExit(agent, 10), 128 + SIGTERM);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent_at).count(), 1.0);
  EXPECT_NE(ReadFile(dir_ + "/stdout")->find("stopping"), std::string::npos);
  EXPECT_TRUE(ProcessesMatching(dir_).empty());
}

TEST_F(AgentProcessTest, SecondSigintKillsWorkersThatIgnoreTheFirst) {
  std::string ready = dir_ + "/ready";
  std::string script = Script("trap '' INT TERM; touch " + ready + "; sleep 100\n");
  pid_t agent = StartAgent({"--nproc-per-node", "1", "--term-timeout", "30"}, {"/bin/sh", script});
  ASSERT_TRUE(WaitFor([&] { return PathExists(ready); }, 10));
  kill(agent, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(ProcessesMatching(dir_).empty());  // the worker ignores the first
  auto sent_at = std::chrono::steady_clock::now();
  kill(agent, SIGINT);
  EXPECT_EQ(WaitForExit(agent, 10), 128 + SIGINT);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent_at).count(), 1.0);
  EXPECT_TRUE(ProcessesMatching(dir_).empty());
  EXPECT_NE(Stderr().find("killing the workers now"), std::string::npos) << Stderr();
}

TEST_F(AgentProcessTest, FailureBannerAndExitCodeOnStderr) {
  std::string script = Script("if [ $RANK = 1 ]; then echo about to fail; exit 42; fi; sleep 100\n");
  pid_t agent = StartAgent({"--nproc-per-node", "3"}, {"/bin/sh", script});
  EXPECT_EQ(WaitForExit(agent, 10), 42);
  std::string log = Stderr();
  EXPECT_NE(log.find("Root cause: rank 1 (local rank 1) on "), std::string::npos) << log;
  EXPECT_NE(log.find("failed with exit code 42"), std::string::npos);
  EXPECT_NE(log.find(" O about to fail"), std::string::npos);
  EXPECT_NE(log.find("Stopped by the agent: ranks 0, 2"), std::string::npos);
}

TEST_F(AgentProcessTest, LaunchErrorsExitWithTheirCodes) {
  pid_t agent = StartAgent({"--nproc-per-node", "1"}, {"no-such-worker-anywhere"});
  EXPECT_EQ(WaitForExit(agent, 10), 4);
  EXPECT_NE(Stderr().find("worker executable 'no-such-worker-anywhere' was not found on PATH"),
            std::string::npos)
      << Stderr();

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t length = sizeof(address);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::string port = std::to_string(ntohs(address.sin_port));
  agent = StartAgent({"--nproc-per-node", "1", "--master-port", port}, {"true"});
  EXPECT_EQ(WaitForExit(agent, 10), 4);
  EXPECT_NE(Stderr().find("master port " + port + " is already in use"), std::string::npos) << Stderr();
  close(listener);

  agent = StartAgent({"--nproc-per-node", "0"}, {"true"});
  EXPECT_EQ(WaitForExit(agent, 10), 2);
}

}  // namespace
}  // namespace primus
