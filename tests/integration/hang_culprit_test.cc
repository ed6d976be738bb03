// The chain from a hang to the rank everyone waits for, with no stack tool
// installed: primus-cli's stack dumper (python/primus_stacks, faulthandler
// in every Python worker) takes every rank's stacks when the watchdog fires,
// and the banner names the rank outside the collective the others are in.
// StackDumperTest (no torch, fast): the dumper loads in a plain Python
// worker and chains the user's own sitecustomize. HangCulpritTorchTest
// (real torch, gloo, 4 workers, slow): rank 2 sleeps outside the all_reduce;
// the banner and `analyze hang` name it, on one node and judged by node 0
// across two; `primus-cli stacks` takes a running job's stacks on demand.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include "free_port.h"
#include "run_process.h"
#include "start_process.h"
#include "util/files.h"
#include "util/log.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;

const std::string kPython = "/usr/bin/python3";

class StackDumperTest : public ::testing::Test {
 protected:
  ProcessOptions Options() const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.timeout_s = 180;
    options.env["HOME"] = dir_.path();
    options.env["PATH"] = "/usr/bin:/bin";  // no py-spy: the dumper is the only way to stacks
    return options;
  }
  testing::TempDir dir_;
};

TEST_F(StackDumperTest, LoadsInEveryPythonWorkerAndChainsTheUsersSitecustomize) {
  dir_.Write("site/sitecustomize.py", "import os\nos.environ['USER_SITE_LOADED'] = 'yes'\n");
  ProcessOptions options = Options();
  options.env["PYTHONPATH"] = dir_.path() + "/site";
  ProcessResult result = RunPrimus(
      {"direct", "--nproc-per-node", "2", "--", "run", kPython, "-c",
       "import os, sys, faulthandler; print('rank', os.environ['RANK'], 'user site', "
       "os.environ.get('USER_SITE_LOADED'), 'dumper', os.environ['PRIMUS_STACK_FILE'].endswith('.pystacks.txt'), "
       "'path', os.environ['PYTHONPATH'].split(':')[1] == sys.argv[1])",
       dir_.path() + "/site"},
      options);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("rank 0 user site yes dumper True path True"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("rank 1 user site yes dumper True path True"), std::string::npos) << result.out;
  // Off with direct.stack_dumper: the worker's PYTHONPATH is the user's alone.
  ProcessResult off = RunPrimus({"direct", "--set", "direct.stack_dumper=false", "--", "run", kPython, "-c",
                                 "import os; print('path', os.environ['PYTHONPATH'], 'file', "
                                 "os.environ.get('PRIMUS_STACK_FILE'))"},
                                options);
  ASSERT_EQ(off.exit_code, 0) << off.all();
  EXPECT_NE(off.out.find("path " + dir_.path() + "/site file None"), std::string::npos) << off.out;
}

// A worker that is not Python (or has not loaded the dumper) is never sent
// the real-time signal, whose default action would kill it: its stacks come
// from gdb, the last resort, and without gdb the log says none could be taken.
TEST_F(StackDumperTest, AWorkerWithoutTheDumperIsNotSignalled) {
  const std::vector<std::string> args = {"direct", "--hang-timeout", "2", "--term-timeout", "2", "--", "run", "/bin/sh",
                                         "-c", "trap 'echo got TERM; exit 9' TERM; echo waiting; while :; do sleep 0.1; done"};
  bool have_gdb = testing::RunProcess({"sh", "-c", "command -v gdb"}).exit_code == 0;
  if (have_gdb) {
    ProcessResult result = RunPrimus(args, Options());
    EXPECT_EQ(result.exit_code, 9) << "stopped by the agent's SIGTERM, not killed by a signal:\n" << result.all();
    EXPECT_NE(result.out.find("got TERM"), std::string::npos) << result.out;
    EXPECT_NE(result.err.find("(native stacks of every thread, from gdb)"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("#0 "), std::string::npos) << result.err;
  }
  // A PATH with sleep only: no py-spy, no gdb.
  dir_.Write("bin/.keep", "");
  ASSERT_EQ(::symlink("/bin/sleep", (dir_.path() + "/bin/sleep").c_str()), 0);
  ProcessOptions bare = Options();
  bare.env["PATH"] = dir_.path() + "/bin";
  ProcessResult result = RunPrimus(args, bare);
  EXPECT_EQ(result.exit_code, 9) << "stopped by the agent's SIGTERM, not killed by the stack signal:\n" << result.all();
  EXPECT_NE(result.out.find("got TERM"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("no worker has primus-cli's stack dumper loaded"), std::string::npos) << result.err;
}

class HangCulpritTorchTest : public StackDumperTest {
 protected:
  void SetUp() override {
    if (testing::RunProcess({kPython, "-c", "import torch.distributed"}).exit_code != 0) {
      GTEST_SKIP() << kPython << " has no torch.distributed";
    }
  }
};

TEST_F(HangCulpritTorchTest, TheBannerNamesTheRankOutsideTheCollective) {
  ProcessResult result =
      RunPrimus({"direct", "--nproc-per-node", "4", "--hang-timeout", "25", "--term-timeout", "2", "--log-dir",
                 dir_.path() + "/logs", "--", "run", kPython,
                 std::string(PRIMUS_SOURCE_DIR) + "/tests/workers/hang_outside_collective.py", "2"},
                Options());
  EXPECT_NE(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("rank 2: stalling at step 3"), std::string::npos) << result.out;
  const std::string culprit = "rank 2 is not in the all_reduce that ranks 0, 1, 3 wait in: rank 2 is at "
                              "hang_outside_collective.py:";
  EXPECT_NE(result.err.find("waiting on: " + culprit), std::string::npos) << "the banner:\n" << result.err;
  EXPECT_NE(result.err.find("in wait_for_peer"), std::string::npos) << result.err;
  // The rank the others wait for is the root cause, not the first victim the watchdog saw.
  EXPECT_NE(result.err.find("Root cause: rank 2 (local rank 2)"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("from the worker's own faulthandler"), std::string::npos) << result.err;

  // After the fact, from the files the run left.
  ProcessResult analyzed = RunPrimus({"analyze", "hang", dir_.path() + "/logs"}, Options());
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.all();
  EXPECT_NE(analyzed.out.find(culprit), std::string::npos) << analyzed.out;
  EXPECT_NE(analyzed.out.find("rank 2: host " + log::HostName() + ", local rank 2"), std::string::npos)
      << analyzed.out;
  EXPECT_NE(analyzed.out.find("(4 stack files, 0 flight recorder dumps)"), std::string::npos) << analyzed.out;
}

// Two agents on this host, two workers each: rank 2 (node 1) sleeps, rank 3
// (node 1) and ranks 0, 1 (node 0) wait in the all_reduce. Node 0 judges
// from every node's places: the banner names rank 2 on its node.
TEST_F(HangCulpritTorchTest, NodeZeroJudgesTheHangAcrossNodes) {
  int port = testing::FreePortPair();
  ASSERT_GT(port, 0);
  std::vector<pid_t> agents;
  for (int node = 0; node < 2; ++node) {
    std::string node_dir = dir_.path() + "/node" + std::to_string(node);
    ASSERT_TRUE(MakeDirs(node_dir).ok());
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--nnodes", "2",
                                     "--node-rank", std::to_string(node), "--master-addr", "127.0.0.1",
                                     "--master-port", std::to_string(port), "--hang-timeout", "25",
                                     "--term-timeout", "2", "--log-dir", node_dir + "/logs", "--", "run", kPython,
                                     std::string(PRIMUS_SOURCE_DIR) + "/tests/workers/hang_outside_collective.py",
                                     "2"};
    ProcessOptions options = Options();
    options.env["PRIMUS_JOB_TOKEN"] = "hang-across-nodes";
    agents.push_back(testing::StartProcess(argv, node_dir + "/out", node_dir + "/err", options));
    ASSERT_GT(agents.back(), 0);
  }
  for (int node = 0; node < 2; ++node) {
    EXPECT_NE(testing::WaitForExit(agents[node], 240), 0) << "the hung job fails";
  }
  std::string err0 = testing::Slurp(dir_.path() + "/node0/err");
  EXPECT_NE(err0.find("waiting on: rank 2 is not in the all_reduce that ranks 0, 1, 3 wait in: rank 2 is at "
                      "hang_outside_collective.py:"),
            std::string::npos)
      << "node 0's banner:\n" << err0 << "\nnode 1:\n" << testing::Slurp(dir_.path() + "/node1/err");
  EXPECT_NE(err0.find("Root cause: rank 2 (local rank 0) on "), std::string::npos) << err0;
  auto verdict = ReadFile(dir_.path() + "/node0/logs/attempt_0/hang_verdict.txt");
  ASSERT_TRUE(verdict.ok()) << "the job's verdict is kept beside node 0's logs";
  EXPECT_NE(verdict->find("rank 2: host " + log::HostName() + ", local rank 0"), std::string::npos) << *verdict;
}

// On demand: a running job's stacks, and it goes on running.
TEST_F(StackDumperTest, StacksOfARunningJobOnDemand) {
  std::string logs = dir_.path() + "/logs";
  pid_t agent = testing::StartProcess(
      {PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--log-dir", logs, "--", "run", kPython, "-c",
       "import time\ndef idle_in_user_code():\n    while True:\n        time.sleep(0.2)\nprint('up', flush=True)\n"
       "idle_in_user_code()\n"},
      dir_.path() + "/out", dir_.path() + "/err", Options());
  ASSERT_GT(agent, 0);
  // The job view lists the workers once the first sample is written.
  bool listed = testing::WaitFor([&] {
    auto view = ReadFile(logs + "/telemetry/job.json");
    std::string out = testing::Slurp(dir_.path() + "/out");
    bool both_up = out.find("up") != out.rfind("up");  // their dumpers are loaded by then
    return both_up && view.ok() && view->find("\"local_rank\"") != std::string::npos;
  }, 60);
  ASSERT_TRUE(listed) << testing::Slurp(dir_.path() + "/err");
  ProcessResult stacks = RunPrimus({"stacks", logs}, Options());
  EXPECT_EQ(stacks.exit_code, 0) << stacks.all() << "\nthe agent:\n" << testing::Slurp(dir_.path() + "/err");
  EXPECT_NE(stacks.out.find("== rank 0 on " + log::HostName()), std::string::npos) << stacks.out;
  EXPECT_NE(stacks.out.find("== rank 1 on " + log::HostName()), std::string::npos) << stacks.out;
  EXPECT_NE(stacks.out.find("in idle_in_user_code"), std::string::npos) << stacks.out;
  EXPECT_TRUE(PathExists(logs + "/attempt_0/" + log::HostName() + ".rank1.stacks.txt"));
  EXPECT_EQ(::kill(agent, 0), 0) << "the job goes on running";
  ::kill(agent, SIGTERM);
  EXPECT_EQ(testing::WaitForExit(agent, 60), 128 + SIGTERM);
  // Not a job of this host's: said, nothing signalled.
  ProcessResult none = RunPrimus({"stacks", dir_.path() + "/nowhere"}, Options());
  EXPECT_EQ(none.exit_code, 4) << none.all();
}

// A stop (here SIGTERM, as scancel or a time limit sends it) takes the
// Python stacks first: where the job was when it was stopped is kept.
TEST_F(StackDumperTest, AStopTakesTheStacksFirstAndASecondStopsAtOnce) {
  std::string logs = dir_.path() + "/logs";
  std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--log-dir", logs, "--", "run",
                                   kPython, "-c",
                                   "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                   "def idle_in_user_code():\n    while True:\n        time.sleep(0.2)\n"
                                   "print('up', flush=True)\nidle_in_user_code()\n"};
  pid_t agent = testing::StartProcess(argv, dir_.path() + "/out", dir_.path() + "/err", Options());
  ASSERT_GT(agent, 0);
  auto both_up = [&] {
    std::string out = testing::Slurp(dir_.path() + "/out");
    return out.find("up") != out.rfind("up");  // their dumpers are loaded by then
  };
  ASSERT_TRUE(testing::WaitFor(both_up, 60)) << testing::Slurp(dir_.path() + "/err");
  ::kill(agent, SIGTERM);
  // The workers ignore SIGTERM: they are killed after --term-timeout (30 s
  // by default) unless a second signal comes; it does once the stacks are in.
  std::string stacks = logs + "/attempt_0/" + log::HostName() + ".rank1.stacks.txt";
  ASSERT_TRUE(testing::WaitFor([&] { return PathExists(stacks); }, 30)) << testing::Slurp(dir_.path() + "/err");
  ::kill(agent, SIGTERM);
  EXPECT_EQ(testing::WaitForExit(agent, 20), 128 + SIGTERM);
  EXPECT_NE(testing::Slurp(stacks).find("in idle_in_user_code"), std::string::npos) << testing::Slurp(stacks);
  std::string err = testing::Slurp(dir_.path() + "/err");
  EXPECT_NE(err.find("received SIGTERM: taking the Python stacks of 2 workers first, at most 2 s"), std::string::npos)
      << err;
  EXPECT_NE(err.find("passing SIGTERM to the workers"), std::string::npos) << err;
  EXPECT_NE(err.find("received SIGTERM while stopping: killing the workers now"), std::string::npos) << err;

  // Impatient: a second Ctrl-C while the stacks are being taken kills at once.
  pid_t again = testing::StartProcess(argv, dir_.path() + "/out", dir_.path() + "/err", Options());
  ASSERT_GT(again, 0);
  ASSERT_TRUE(testing::WaitFor(both_up, 60)) << testing::Slurp(dir_.path() + "/err");
  ::kill(again, SIGINT);
  ASSERT_TRUE(testing::WaitFor([&] {
    return testing::Slurp(dir_.path() + "/err").find("received SIGINT: taking the Python stacks") != std::string::npos;
  }, 10));
  ::kill(again, SIGINT);
  EXPECT_EQ(testing::WaitForExit(again, 20), 128 + SIGINT);
  err = testing::Slurp(dir_.path() + "/err");
  EXPECT_NE(err.find("received SIGINT while taking the stacks for the stop: keeping what was collected and killing "
                     "the workers now"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace primus
