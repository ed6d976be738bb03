// The chain from a hang to the rank everyone waits for, with no stack tool
// installed: primus-cli's stack dumper (python/primus_stacks, faulthandler
// in every Python worker) takes every rank's stacks when the watchdog fires,
// and the banner names the rank outside the collective the others are in.
// StackDumperTest (no torch, fast): the dumper loads in a plain Python
// worker and chains the user's own sitecustomize. HangCulpritTorchTest
// (real torch, gloo, 4 workers, slow): rank 2 sleeps outside the all_reduce.
#include <gtest/gtest.h>

#include <string>

#include "run_process.h"
#include "util/files.h"

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
// the real-time signal, whose default action would kill it.
TEST_F(StackDumperTest, AWorkerWithoutTheDumperIsNotSignalled) {
  ProcessResult result = RunPrimus({"direct", "--hang-timeout", "2", "--term-timeout", "2", "--", "run", "/bin/sh",
                                    "-c", "trap 'echo got TERM; exit 9' TERM; echo waiting; while :; do sleep 0.1; done"},
                                   Options());
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
      RunPrimus({"direct", "--nproc-per-node", "4", "--hang-timeout", "25", "--term-timeout", "2", "--", "run",
                 kPython, std::string(PRIMUS_SOURCE_DIR) + "/tests/workers/hang_outside_collective.py", "2"},
                Options());
  EXPECT_NE(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("rank 2: stalling at step 3"), std::string::npos) << result.out;
  const std::string culprit = "rank 2 is not in the all_reduce that ranks 0, 1, 3 wait in: rank 2 is at "
                              "hang_outside_collective.py:";
  EXPECT_NE(result.err.find("waiting on: " + culprit), std::string::npos) << "the banner:\n" << result.err;
  EXPECT_NE(result.err.find("in wait_for_peer"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("from the worker's own faulthandler"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace primus
