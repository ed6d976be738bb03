// torchrun's command line through the real binary invoked as `torchrun`
// (the link the build makes beside primus-cli): --dry-run plans, refusals,
// real workers (a python script, -m module, --no-python, --run-path), exit
// codes, --local-ranks-filter on two nodes, --redirects/--tee against the
// log files (TorchrunTest: plain python, under a second each); and side by
// side with Debian's real torchrun (torch 1.13 through
// tests/tools/torchrun_compat.py) on the same command line: the same
// worker environment and output, and the documented exit-code difference;
// a gloo DDP step run as a module (TorchrunTorchTest: real torch, slow).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "free_port.h"
#include "run_process.h"
#include "worker_variables.h"
#include "start_process.h"
#include "text.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus {
namespace {

using testing::Contains;
using testing::FreePortPair;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kTests = std::string(PRIMUS_SOURCE_DIR) + "/tests";
const std::string kPython = "/usr/bin/python3";

std::string Torchrun() { return DirName(PRIMUS_BINARY) + "/torchrun"; }

class TorchrunTest : public ::testing::Test {
 protected:
  // `torchrun ARGS` with HOME in the test directory (no user configuration).
  ProcessResult Run(const std::vector<std::string>& args, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {Torchrun()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options(env));
  }
  ProcessOptions Options(const std::map<std::string, std::string>& env) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.timeout_s = 60;
    options.env["HOME"] = dir_.path();
    options.env["PYTHON_EXEC"] = std::nullopt;
    options.env["PRIMUS_DIRECT_FAILURE_EXIT_CODE"] = std::nullopt;
    options.env["OMP_NUM_THREADS"] = std::nullopt;
    for (const char* name : {"PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT"}) {
      options.env[name] = std::nullopt;
    }
    for (const auto& [key, value] : env) options.env[key] = value;
    return options;
  }
  testing::TempDir dir_;
};

TEST_F(TorchrunTest, TheLinkIsBesideTheBinary) {
  ProcessResult help = Run({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_TRUE(Contains(help.out, "usage: torchrun [options] training_script")) << help.out;
  ProcessResult version = Run({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(Contains(version.out, "primus-cli "));
}

// A venv's torchrun runs its workers with that venv's interpreter; so does
// our link placed in a venv (bin/torchrun -> primus-cli beside bin/python3).
// PYTHON_EXEC still wins.
TEST_F(TorchrunTest, ALinkInAVenvRunsTheWorkersWithThatVenvsPython) {
  std::string bin = dir_.path() + "/venv/bin";
  std::filesystem::create_directories(bin);
  std::filesystem::create_symlink(PRIMUS_BINARY, bin + "/torchrun");
  dir_.Write("venv/bin/python3", "#!/bin/sh\necho \"venv python for rank $RANK\"\n");
  std::filesystem::permissions(bin + "/python3", std::filesystem::perms::owner_all);
  dir_.Write("train.py", "print('the script')\n");
  ProcessResult result = RunProcess({bin + "/torchrun", "--nproc-per-node", "2", "train.py"}, Options({}));
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_TRUE(Contains(result.out, "venv python for rank 0")) << result.all();
  EXPECT_TRUE(Contains(result.out, "venv python for rank 1")) << result.all();
  ProcessResult exec = RunProcess({bin + "/torchrun", "--nproc-per-node", "1", "train.py"},
                                  Options({{"PYTHON_EXEC", "/usr/bin/python3"}}));
  ASSERT_EQ(exec.exit_code, 0) << exec.all();
  EXPECT_TRUE(Contains(exec.out, "the script")) << exec.all();
  EXPECT_FALSE(Contains(exec.out, "venv python")) << exec.all();
}

TEST_F(TorchrunTest, DryRunPlanIsTheSameThroughTheLinkAndTheWord) {
  std::vector<std::string> args = {"--dry-run", "--nnodes=2", "--node_rank=1", "--master_addr=10.0.0.1",
                                   "--master_port=29600", "--nproc_per_node=2", "--max-restarts", "3",
                                   "train.py", "--lr", "3e-4"};
  ProcessResult link = Run(args, {{"PYTHON_EXEC", "/opt/py/bin/python"}});
  ASSERT_EQ(link.exit_code, 0) << link.err;
  std::vector<std::string> word_argv = {PRIMUS_BINARY, "torchrun"};
  word_argv.insert(word_argv.end(), args.begin(), args.end());
  ProcessResult word = RunProcess(word_argv, Options({{"PYTHON_EXEC", "/opt/py/bin/python"}}));
  ASSERT_EQ(word.exit_code, 0) << word.err;
  EXPECT_EQ(link.out, word.out);
  const std::string& plan = link.out;
  for (const char* part : {"mode 1: direct (torchrun's command line, read as direct -- run)",
                           "torchrun: python: $PYTHON_EXEC = /opt/py/bin/python",
                           "task arguments: /opt/py/bin/python -u train.py --lr 3e-4",
                           "world: 2 nodes x 2 workers = world size 4; this node is node rank 1 (global ranks 2-3)",
                           "master: 10.0.0.1:29600", "OMP_NUM_THREADS: 1 where unset (torchrun's rule)"}) {
    EXPECT_TRUE(Contains(plan, part)) << part << "\n" << plan;
  }
  // Each value with where it came from.
  for (const auto& [key, origin] : std::vector<std::pair<std::string, std::string>>{
           {"direct.nnodes", "flag --nnodes"}, {"direct.node_rank", "flag --node_rank"},
           {"direct.max_restarts", "flag --max-restarts"}, {"direct.platform", "torchrun default"},
           {"direct.omp_num_threads", "torchrun default"}}) {
    bool found = false;
    for (const std::string& line : Split(plan, '\n')) {
      if (Contains(line, "  " + key + " ") && Contains(line, origin)) found = true;
    }
    EXPECT_TRUE(found) << key << " from " << origin << "\n" << plan;
  }
}

TEST_F(TorchrunTest, DryRunReadsPetVariablesAndSaysWhichPython) {
  ProcessResult result = Run({"--dry-run", "t.py"}, {{"PET_NNODES", "2"},
                                                     {"PET_NODE_RANK", "1"},
                                                     {"PET_MASTER_ADDR", "10.0.0.7"},
                                                     {"PET_NPROC_PER_NODE", "3"},
                                                     {"PATH", "/usr/bin:/bin"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(Contains(result.out, "this node is node rank 1 (global ranks 3-5)")) << result.out;
  EXPECT_TRUE(Contains(result.out, "master: 10.0.0.7:29500")) << result.out;  // torchrun's port on several nodes
  EXPECT_TRUE(Contains(result.out, "env PET_NNODES")) << result.out;
  EXPECT_TRUE(Contains(result.out, "python: python3 from PATH (/usr/bin/python3;")) << result.out;
}

TEST_F(TorchrunTest, WhatWeCannotDoIsRefusedWithExitTwoEvenInADryRun) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--max-restarts=-1", "t.py"},
           {"--nnodes", "1:4", "t.py"},  // elastic needs c10d or etcd-v2
           {"--logs-specs", "custom", "t.py"},
           {"--nnodes", "2", "--rdzv-backend", "etcd-v2", "--rdzv-endpoint", "h:2379", "t.py"},  // no --rdzv-id
           {"--nnodes", "2", "--rdzv-backend", "c10d", "t.py"},  // no endpoint
           {"--numa-binding", "socket", "t.py"},
           {"--no-such-flag", "t.py"}}) {
    for (bool dry_run : {false, true}) {
      std::vector<std::string> full = args;
      if (dry_run) full.insert(full.begin(), "--dry-run");
      ProcessResult result = Run(full);
      EXPECT_EQ(result.exit_code, 2) << Join(full, " ") << "\n" << result.err;
      EXPECT_TRUE(Contains(result.err, "hint: ")) << result.err;
      EXPECT_TRUE(result.out.empty()) << result.out;
    }
  }
  // direct's own --max-restarts: a run and a dry run agree too.
  ProcessResult real = RunProcess({PRIMUS_BINARY, "direct", "--max-restarts=-1", "--", "run", "true"}, Options({}));
  ProcessResult dry =
      RunProcess({PRIMUS_BINARY, "--dry-run", "direct", "--max-restarts=-1", "--", "run", "true"}, Options({}));
  EXPECT_NE(real.exit_code, 0);
  EXPECT_EQ(real.exit_code, dry.exit_code);
}

TEST_F(TorchrunTest, TwoWorkersRunAPythonScriptWithItsArguments) {
  dir_.Write("hello.py",
             "import os, sys\n"
             "print('hello rank', os.environ['RANK'], 'local', os.environ['LOCAL_RANK'], 'of',\n"
             "      os.environ['WORLD_SIZE'], 'omp', os.environ.get('OMP_NUM_THREADS'), 'args', sys.argv[1:],\n"
             "      'unbuffered', '-u' in sys.orig_argv, flush=True)\n");
  ProcessResult result = Run({"--nproc-per-node", "2", "hello.py", "--lr", "1 2"}, {{"PYTHON_EXEC", kPython}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    EXPECT_TRUE(Contains(result.out, "hello rank " + r + " local " + r + " of 2 omp 1 args ['--lr', '1 2'] unbuffered True"))
        << result.out;
  }
  // One worker by default, and then torchrun leaves OMP_NUM_THREADS alone.
  ProcessResult one = Run({"hello.py"}, {{"PYTHON_EXEC", kPython}});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(Contains(one.out, "hello rank 0 local 0 of 1 omp None")) << one.out;
}

TEST_F(TorchrunTest, ModuleNoPythonAndRunPath) {
  dir_.Write("pkg/__init__.py", "");
  dir_.Write("pkg/main.py",
             "import os, sys\n"
             "print('module', __name__, 'rank', os.environ['RANK'], 'args', sys.argv[1:], flush=True)\n");
  ProcessResult module = Run({"--nproc_per_node=2", "-m", "pkg.main", "x"}, {{"PYTHON_EXEC", kPython}});
  ASSERT_EQ(module.exit_code, 0) << module.err;
  EXPECT_TRUE(Contains(module.out, "module __main__ rank 0 args ['x']")) << module.out;
  EXPECT_TRUE(Contains(module.out, "module __main__ rank 1 args ['x']")) << module.out;

  ProcessResult program = Run({"--nproc_per_node=2", "--no-python", "/bin/sh", "-c", "echo program rank $RANK"});
  ASSERT_EQ(program.exit_code, 0) << program.err;
  EXPECT_TRUE(Contains(program.out, "program rank 1")) << program.out;

  std::string script = dir_.Write("run_path.py",
                                  "import os, sys\n"
                                  "print('run-path', __name__, sys.argv, os.environ['RANK'], flush=True)\n");
  ProcessResult run_path = Run({"--run-path", script, "y"}, {{"PYTHON_EXEC", kPython}});
  ASSERT_EQ(run_path.exit_code, 0) << run_path.err;
  EXPECT_TRUE(Contains(run_path.out, "run-path __main__ ['" + script + "', 'y'] 0")) << run_path.out;
}

TEST_F(TorchrunTest, ExitCodeIsTheFailingWorkersOwnAndTorchrunsOnRequest) {
  std::vector<std::string> args = {"--nproc-per-node", "2", "--no-python", "/bin/sh", "-c",
                                   "[ $RANK = 1 ] && exit 3; sleep 5"};
  ProcessResult ours = Run(args);
  EXPECT_EQ(ours.exit_code, 3) << ours.err;
  EXPECT_TRUE(Contains(ours.err, "Root cause: rank 1 (local rank 1)")) << ours.err;
  EXPECT_TRUE(Contains(ours.err, "torchrun exits 1 whatever the worker's code")) << ours.err;
  EXPECT_TRUE(Contains(ours.err, "PRIMUS_DIRECT_FAILURE_EXIT_CODE=1")) << ours.err;
  ProcessResult theirs = Run(args, {{"PRIMUS_DIRECT_FAILURE_EXIT_CODE", "1"}});
  EXPECT_EQ(theirs.exit_code, 1) << theirs.err;
  EXPECT_FALSE(Contains(theirs.err, "torchrun exits 1 whatever")) << theirs.err;
}

// Node 0 and node 1 of a two-node job on this host, two workers each,
// started with `launcher` (argv up to the node's flags): each agent's stdout.
std::vector<std::string> TwoNodes(const testing::TempDir& dir, const ProcessOptions& options,
                                  const std::vector<std::string>& launcher, const std::vector<std::string>& tail) {
  std::string port = std::to_string(FreePortPair());
  std::vector<pid_t> agents;
  for (int node = 0; node < 2; ++node) {
    std::string node_dir = dir.path() + "/node" + std::to_string(node);
    EXPECT_TRUE(MakeDirs(node_dir).ok());
    std::vector<std::string> argv = launcher;
    argv.insert(argv.end(), {"--nnodes", "2", "--node-rank", std::to_string(node), "--master-addr", "127.0.0.1",
                             "--master-port", port, "--nproc-per-node", "2", "--local-ranks-filter", "0"});
    argv.insert(argv.end(), tail.begin(), tail.end());
    agents.push_back(testing::StartProcess(argv, node_dir + "/out", node_dir + "/err", options));
  }
  std::vector<std::string> outs;
  for (int node = 0; node < 2; ++node) {
    std::string node_dir = dir.path() + "/node" + std::to_string(node);
    EXPECT_EQ(testing::WaitForExit(agents[node], 60), 0) << testing::Slurp(node_dir + "/err");
    outs.push_back(testing::Slurp(node_dir + "/out"));
  }
  return outs;
}

TEST_F(TorchrunTest, LocalRanksFilterMeansLocalRanksOnEveryNode) {
  // torchrun: --local-ranks-filter 0 shows local rank 0 of every node.
  std::vector<std::string> outs =
      TwoNodes(dir_, Options({}), {Torchrun()}, {"--no-python", "/bin/sh", "-c", "echo worker rank $RANK"});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(Contains(outs[0], "worker rank 0")) << outs[0];
  EXPECT_FALSE(Contains(outs[0], "worker rank 1")) << outs[0];
  EXPECT_TRUE(Contains(outs[1], "worker rank 2")) << outs[1];
  EXPECT_FALSE(Contains(outs[1], "worker rank 3")) << outs[1];
  // direct's --local-ranks-filter means the same.
  outs = TwoNodes(dir_, Options({}), {PRIMUS_BINARY, "direct"}, {"--", "run", "/bin/sh", "-c", "echo worker rank $RANK"});
  EXPECT_TRUE(Contains(outs[0], "worker rank 0")) << outs[0];
  EXPECT_FALSE(Contains(outs[0], "worker rank 1")) << outs[0];
  EXPECT_TRUE(Contains(outs[1], "worker rank 2")) << outs[1];
  EXPECT_FALSE(Contains(outs[1], "worker rank 3")) << outs[1];
}

TEST_F(TorchrunTest, RedirectsKeepStreamsInTheLogFilesAndTeeShowsThem) {
  // -r 3: both streams of every local rank to the files only; -t 0:2 shows
  // local rank 0's stderr anyway.
  std::string logs = dir_.path() + "/logs";
  ProcessResult result = Run({"--nproc-per-node", "2", "-r", "3", "-t", "0:2", "--log-dir", logs, "--rdzv-id", "job5",
                              "--no-python", "/bin/sh", "-c", "echo out $RANK; echo err $RANK >&2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // As with torchrun, the workers' stderr lines are on stderr.
  EXPECT_TRUE(Contains(result.err, "] err 0\n")) << result.err;
  EXPECT_FALSE(Contains(result.err, "] err 1")) << result.err;
  EXPECT_FALSE(Contains(result.out, "out 0")) << result.out;
  EXPECT_FALSE(Contains(result.out, "out 1")) << result.out;
  // One directory per run below --log-dir, named after --rdzv-id; every line in the rank's file.
  std::vector<std::string> runs;
  for (const auto& entry : std::filesystem::directory_iterator(logs)) runs.push_back(entry.path().filename());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].starts_with("job5_")) << runs[0];
  for (int rank = 0; rank < 2; ++rank) {
    std::string r = std::to_string(rank);
    std::string log = testing::Slurp(logs + "/" + runs[0] + "/attempt_0/" + log::HostName() + ".rank" + r + ".log");
    EXPECT_TRUE(Contains(log, " O out " + r + "\n")) << log;
    EXPECT_TRUE(Contains(log, " E err " + r + "\n")) << log;
  }
}

// The files below --log-dir, relative to it, with the run directory's random
// part written as "*" ("job5_*/attempt_0/0/stdout.log").
std::set<std::string> LogTree(const std::string& root) {
  std::set<std::string> files;
  if (!std::filesystem::exists(root)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::string relative = std::filesystem::relative(entry.path(), root).string();
    size_t slash = relative.find('/');
    size_t underscore = relative.find('_');
    if (underscore != std::string::npos && underscore < slash) relative.replace(underscore + 1, slash - underscore - 1, "*");
    files.insert(relative);
  }
  return files;
}

// torchrun's layout, which tools glob for: <log-dir>/<id>_<random>/attempt_<n>/
// <local rank>/stdout.log and stderr.log for the streams redirected or teed,
// as the worker wrote them, and error.json as TORCHELASTIC_ERROR_FILE; ours beside it.
TEST_F(TorchrunTest, LogDirWritesTorchrunsLayoutBesideOurs) {
  std::string logs = dir_.path() + "/logs";
  ProcessResult result =
      Run({"--nproc-per-node", "2", "-r", "0:1", "-t", "1:3", "--log-dir", logs, "--rdzv-id", "lay", "--no-python",
           "/bin/sh", "-c", "printf 'out %s\\n' $RANK; printf 'err %s\\n' $RANK >&2; echo $TORCHELASTIC_ERROR_FILE"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::string host = log::HostName();
  std::set<std::string> expected = {
      "lay_*/attempt_0/0/stdout.log",  "lay_*/attempt_0/1/stdout.log", "lay_*/attempt_0/1/stderr.log",
      "lay_*/attempt_0/" + host + ".rank0.log", "lay_*/attempt_0/" + host + ".rank1.log",
      "lay_*/attempt_0/" + host + ".rank0.heartbeat", "lay_*/attempt_0/" + host + ".rank1.heartbeat",
      "lay_*/attempt_0/" + host + ".rank0.metrics.jsonl", "lay_*/attempt_0/" + host + ".rank1.metrics.jsonl",
  };
  std::set<std::string> tree = LogTree(logs);
  for (const std::string& file : expected) EXPECT_TRUE(tree.count(file)) << file << " missing";
  for (const std::string& file : tree) {
    if (file.find("/attempt_0/0/") != std::string::npos || file.find("/attempt_0/1/") != std::string::npos) {
      EXPECT_TRUE(expected.count(file)) << file << " is not in torchrun's layout";
    }
  }
  std::vector<std::string> runs;
  for (const auto& entry : std::filesystem::directory_iterator(logs)) runs.push_back(entry.path().filename());
  ASSERT_EQ(runs.size(), 1u);
  std::string attempt = logs + "/" + runs[0] + "/attempt_0/";
  // Raw, as the worker wrote it: no stamp, no prefix.
  EXPECT_EQ(testing::Slurp(attempt + "0/stdout.log"), "out 0\n" + attempt + "0/error.json\n");
  EXPECT_EQ(testing::Slurp(attempt + "1/stdout.log"), "out 1\n" + attempt + "1/error.json\n");
  EXPECT_EQ(testing::Slurp(attempt + "1/stderr.log"), "err 1\n");
  // Ours keeps everything, stamped.
  EXPECT_TRUE(Contains(testing::Slurp(attempt + host + ".rank0.log"), " E err 0\n"));
  // Local rank 0's stdout is redirected (off the console), local rank 1's teed.
  EXPECT_FALSE(Contains(result.out, "out 0")) << result.out;
  EXPECT_TRUE(Contains(result.out, "out 1")) << result.out;
}

// --virtual-local-rank: each worker sees its own GPU as device 0.
TEST_F(TorchrunTest, VirtualLocalRankGivesEachWorkerItsDeviceAsZero) {
  ProcessResult result = Run({"--nproc-per-node", "2", "--virtual-local-rank", "--no-python", "/bin/sh", "-c",
                              "echo rank $RANK local $LOCAL_RANK devices $CUDA_VISIBLE_DEVICES"},
                             {{"CUDA_VISIBLE_DEVICES", "5,7"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(Contains(result.out, "rank 0 local 0 devices 5\n")) << result.out;
  EXPECT_TRUE(Contains(result.out, "rank 1 local 0 devices 7\n")) << result.out;
  // Without a list, the local rank; a list too short is refused as torchrun refuses it.
  ProcessOptions unlisted = Options({});
  unlisted.env["CUDA_VISIBLE_DEVICES"] = std::nullopt;
  result = RunProcess({Torchrun(), "--nproc-per-node", "2", "--virtual_local_rank", "--no-python", "/bin/sh", "-c",
                       "echo rank $RANK local $LOCAL_RANK devices $CUDA_VISIBLE_DEVICES"},
                      unlisted);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(Contains(result.out, "rank 1 local 0 devices 1\n")) << result.out;
  result = Run({"--nproc-per-node", "2", "--virtual-local-rank", "--no-python", "/bin/true"},
               {{"CUDA_VISIBLE_DEVICES", "3"}});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.err, "CUDA_VISIBLE_DEVICES=3 names fewer GPUs")) << result.err;
}

// Real torch: torchrun itself beside ours.
class TorchrunTorchTest : public TorchrunTest {
 protected:
  void SetUp() override {
    if (RunProcess({kPython, "-c", "import torch.distributed.run"}).exit_code != 0) {
      GTEST_SKIP() << kPython << " has no torch.distributed.run";
    }
  }
  // The same command line under torchrun 1.13 and under our link, from the
  // same minimal environment.
  std::pair<ProcessResult, ProcessResult> BothRun(const std::vector<std::string>& args,
                                                  const std::map<std::string, std::string>& extra = {}) {
    ProcessResult their_result = RunTheirs(args, extra);
    environments_.push_back(Environments());
    ProcessResult our_result = RunOurs(args, extra);
    environments_.push_back(Environments());
    return {their_result, our_result};
  }
  ProcessResult RunTheirs(const std::vector<std::string>& args, const std::map<std::string, std::string>& extra = {}) {
    std::vector<std::string> theirs = {kPython, kTests + "/tools/torchrun_compat.py"};
    theirs.insert(theirs.end(), args.begin(), args.end());
    return RunProcess(theirs, BothOptions(extra));
  }
  ProcessResult RunOurs(const std::vector<std::string>& args, const std::map<std::string, std::string>& extra = {}) {
    std::vector<std::string> ours = {Torchrun()};
    ours.insert(ours.end(), args.begin(), args.end());
    return RunProcess(ours, BothOptions(extra));
  }
  ProcessOptions BothOptions(const std::map<std::string, std::string>& extra) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.timeout_s = 120;
    options.clear_env = true;
    options.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", dir_.path()}, {"LANG", "C.UTF-8"}};
    for (const auto& [key, value] : extra) options.env[key] = value;
    return options;
  }
  // rank -> variables, from the worker's env.<rank>.json files (removed after reading).
  std::map<int, std::map<std::string, std::string>> Environments() {
    std::map<int, std::map<std::string, std::string>> result;
    for (int rank = 0; rank < 2; ++rank) {
      std::string path = dir_.path() + "/out/env." + std::to_string(rank) + ".json";
      auto text = ReadFile(path);
      if (!text.ok()) continue;
      result[rank] = nlohmann::json::parse(*text).get<std::map<std::string, std::string>>();
      ::unlink(path.c_str());
    }
    return result;
  }
  std::vector<std::map<int, std::map<std::string, std::string>>> environments_;
};

// The worker's own lines (torchrun prints them bare, we behind "[host:rank] ").
// Every worker line, wherever it starts: torchrun passes the workers' output
// through unbuffered, so two lines written at once can share one line of its
// output ("...'0']worker rank 0 ..."); each starts at its own marker.
std::multiset<std::string> WorkerLines(const std::string& out) {
  std::multiset<std::string> lines;
  for (const std::string& line : Split(out, '\n')) {
    for (const char* start : {"worker rank ", "worker stderr rank "}) {
      std::vector<size_t> starts;
      for (size_t at = line.find(start); at != std::string::npos; at = line.find(start, at + 1)) starts.push_back(at);
      for (size_t i = 0; i < starts.size(); ++i) {
        size_t end = i + 1 < starts.size() ? starts[i + 1] : line.size();
        lines.insert(line.substr(starts[i], end - starts[i]));
      }
    }
  }
  return lines;
}

TEST_F(TorchrunTorchTest, SameCommandLineGivesTheSameWorkersAsTorchrun) {
  ASSERT_TRUE(MakeDirs(dir_.path() + "/out").ok());
  std::string port = std::to_string(FreePortPair());
  // torch 1.13's torchrun knows the underscore spellings only; ours knows both.
  auto [theirs, ours] = BothRun({"--nnodes", "1", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                                 "--master_port", port, "--rdzv_id", "compare", "--monitor_interval", "0.1",
                                 "--max_restarts", "0", kTests + "/workers/torchrun_compare.py", dir_.path() + "/out",
                                 "0"});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  // The same lines on the same streams.
  EXPECT_EQ(WorkerLines(theirs.out), WorkerLines(ours.out)) << theirs.out << "\n---\n" << ours.out;
  EXPECT_EQ(WorkerLines(theirs.err), WorkerLines(ours.err)) << theirs.err << "\n---\n" << ours.err;
  EXPECT_EQ(WorkerLines(ours.out).size(), 2u) << ours.out;
  EXPECT_EQ(WorkerLines(ours.err).size(), 2u) << ours.err;

  const auto& their_env = environments_[0];
  const auto& our_env = environments_[1];
  ASSERT_EQ(their_env.size(), 2u);
  ASSERT_EQ(our_env.size(), 2u);
  // Values that must match, key by key, now that both read the same command line.
  const std::vector<std::string> same = {
      "RANK",           "LOCAL_RANK",       "WORLD_SIZE",   "LOCAL_WORLD_SIZE",       "GROUP_RANK",
      "GROUP_WORLD_SIZE", "ROLE_RANK",      "ROLE_NAME",    "ROLE_WORLD_SIZE",        "MASTER_ADDR",
      "MASTER_PORT",    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RESTART_COUNT",
      "OMP_NUM_THREADS", "PATH",            "HOME",         "LANG"};
  // The documented differences (docs/torchrun.md).
  const std::set<std::string> only_theirs = {"NCCL_ASYNC_ERROR_HANDLING"};  // torch < 2.2's name
  const std::set<std::string> different = {"TORCHELASTIC_ERROR_FILE", "TORCHELASTIC_USE_AGENT_STORE"};
  std::set<std::string> only_ours = testing::VariablesOnlyOurs();
  only_ours.insert("PYTHONPATH");  // the stack dumper's directory
  // And this host's environment plan (profiles, network auto-configuration),
  // which `info --json` shows for the same environment.
  ProcessOptions info_options;
  info_options.clear_env = true;
  info_options.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", dir_.path()}, {"LANG", "C.UTF-8"}};
  ProcessResult info = RunProcess({PRIMUS_BINARY, "info", "--json"}, info_options);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  nlohmann::json planned = nlohmann::json::parse(info.out)["env"];
  ASSERT_FALSE(planned.empty()) << info.out;
  for (const auto& [key, entry] : planned.items()) only_ours.insert(key);
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto& t = their_env.at(rank);
    const auto& o = our_env.at(rank);
    for (const std::string& key : same) {
      ASSERT_TRUE(t.count(key)) << key;
      ASSERT_TRUE(o.count(key)) << key;
      EXPECT_EQ(t.at(key), o.at(key)) << key;
    }
    EXPECT_EQ(o.at("MASTER_PORT"), port);
    EXPECT_EQ(o.at("TORCHELASTIC_RUN_ID"), "compare");
    EXPECT_EQ(o.at("OMP_NUM_THREADS"), "1");
    for (const auto& [key, value] : t) {
      if (!o.count(key)) {
        EXPECT_TRUE(only_theirs.count(key)) << key << " is set by torchrun only: " << value;
      } else if (o.at(key) != value) {
        EXPECT_TRUE(different.count(key)) << key << ": torchrun " << value << ", ours " << o.at(key);
      }
    }
    for (const auto& [key, value] : o) {
      if (!t.count(key)) {
        EXPECT_TRUE(only_ours.count(key)) << key << " is set by us only: " << value;
      }
    }
  }
}

// The same --log-dir command line under torchrun and ours: the same files in
// torchrun's layout, with the same bytes.
TEST_F(TorchrunTorchTest, LogDirLayoutIsTorchruns) {
  auto args = [&](const std::string& logs) {
    return std::vector<std::string>{"--nproc_per_node", "2", "--redirects", "0:3", "--tee", "1:1", "--log_dir", logs,
                                    "--rdzv_id", "lay", "--monitor_interval", "0.1", "--no_python", "/bin/sh", "-c",
                                    "echo out $RANK; echo err $RANK >&2"};
  };
  ProcessResult theirs = RunTheirs(args(dir_.path() + "/theirs"));
  ProcessResult ours = RunOurs(args(dir_.path() + "/ours"));
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  std::set<std::string> their_tree = LogTree(dir_.path() + "/theirs");
  ASSERT_FALSE(their_tree.empty());
  std::set<std::string> our_tree = LogTree(dir_.path() + "/ours");
  for (const std::string& file : their_tree) {
    EXPECT_TRUE(our_tree.count(file)) << file << " is in torchrun's layout, not in ours";
  }
  for (const std::string& file : our_tree) {
    if (file.ends_with("stdout.log") || file.ends_with("stderr.log") || file.ends_with("error.json")) {
      EXPECT_TRUE(their_tree.count(file)) << file << " is not in torchrun's layout";
    }
  }
  auto read = [&](const std::string& root, const std::string& relative) {
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
      return testing::Slurp(entry.path().string() + "/" + relative);
    }
    return std::string();
  };
  for (const char* file : {"attempt_0/0/stdout.log", "attempt_0/0/stderr.log", "attempt_0/1/stdout.log"}) {
    EXPECT_EQ(read(dir_.path() + "/theirs", file), read(dir_.path() + "/ours", file)) << file;
  }
}

TEST_F(TorchrunTorchTest, AFailureExitsWithTheWorkersCodeWhereTorchrunExitsOne) {
  ASSERT_TRUE(MakeDirs(dir_.path() + "/out").ok());
  std::vector<std::string> args = {"--nproc_per_node", "2", "--monitor_interval", "0.1",
                                   kTests + "/workers/torchrun_compare.py", dir_.path() + "/out", "3"};
  auto [theirs, ours] = BothRun(args);
  EXPECT_EQ(theirs.exit_code, 1) << theirs.err;
  EXPECT_TRUE(ours.exit_code == 3 || ours.exit_code == 4) << ours.err;  // the first failing worker's own: 3 + RANK
  EXPECT_TRUE(Contains(ours.err, "PRIMUS_DIRECT_FAILURE_EXIT_CODE=1")) << ours.err;
  auto [theirs_again, ours_as_torchrun] = BothRun(args, {{"PRIMUS_DIRECT_FAILURE_EXIT_CODE", "1"}});
  EXPECT_EQ(theirs_again.exit_code, 1);
  EXPECT_EQ(ours_as_torchrun.exit_code, 1) << ours_as_torchrun.err;
}

TEST_F(TorchrunTorchTest, GlooDdpStepAsAModule) {
  ProcessOptions options = Options({{"PYTHON_EXEC", kPython}});
  options.cwd = kTests + "/workers";
  options.timeout_s = 120;
  ProcessResult result =
      RunProcess({Torchrun(), "--standalone", "--nproc-per-node", "2", "-m", "ddp_step"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(Contains(result.out, "ddp step ok: rank 0 of 2")) << result.out;
  EXPECT_TRUE(Contains(result.out, "ddp step ok: rank 1 of 2")) << result.out;
}

}  // namespace
}  // namespace primus
