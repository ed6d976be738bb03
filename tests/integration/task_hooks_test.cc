// Hooks and patches for every task that starts work, through the real binary:
// the Primus blog's runner/helpers/hooks/ layout, --patch and a Python hook
// using the shipped API (python/primus_hooks.py) before `run`, `benchmark`,
// `preflight` and `train`; --dry-run lists them for the task given and runs
// none; a task that starts nothing refuses --patch. Each under a second but
// the train one (a command backend, no PyTorch).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

class TaskHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The blog's place and name for a hook, not executable: run under bash.
    dir_.Write("runner/helpers/hooks/global/01_blog.sh", "echo env.FROM_BLOG_LAYOUT=yes\necho blog >> order.txt\n");
    // A system hook of Primus's own layout: a file at the top, which reads its
    // group and name from its arguments as Primus's runner gives them.
    dir_.Write("runner/helpers/hooks/00_system.sh",
               "set -eu\n: \"${1:?missing hook group}\" \"${2:?missing hook name}\"\necho \"system $1 $2\" >> order.txt\n");
    dir_.Write("runner/helpers/hooks/README.txt", "not a hook\n");
    dir_.Write("patch.sh", "#!/bin/sh\necho env.PATCHED=1\necho patch >> order.txt\n");
    fs::permissions(dir_.path() + "/patch.sh", fs::perms::owner_exec, fs::perm_options::add);
  }
  ProcessResult Run(std::vector<std::string> args) {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["NO_COLOR"] = "1";
    options.timeout_s = 120;
    return RunPrimus(args, options);
  }
  TempDir dir_;
};

TEST_F(TaskHooksTest, RunGetsThePatchTheBlogLayoutsHookAndAPythonHooksVariableAndArgument) {
  dir_.Write(".primus/hooks/run/02_api.py",
             "from primus_hooks import context, set_env, add_arg\n"
             "ctx = context()\n"
             "set_env('HOOK_TASK', f'{ctx.task}:{ctx.kind}:{ctx.node_rank}/{ctx.nnodes}')\n"
             "add_arg('greeting', 'hello')\n");
  ProcessResult result = Run({"direct", "--nproc-per-node", "1", "--patch", "patch.sh", "--", "run", "sh", "-c",
                              "echo \"ARGS=$* BLOG=$FROM_BLOG_LAYOUT TASK=$HOOK_TASK PATCHED=$PATCHED\"", "cmd"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("ARGS=--greeting hello BLOG=yes TASK=run:hook:0/1 PATCHED=1"), std::string::npos)
      << result.all();
  EXPECT_NE(result.err.find("the hooks add to the command: --greeting hello"), std::string::npos) << result.err;
  EXPECT_EQ(Slurp(dir_.path() + "/order.txt"), "patch\nsystem run sh\nblog\n")
      << "patches first, then the hooks: Primus's top-level ones, then global/";
}

TEST_F(TaskHooksTest, BenchmarkTakesAHooksArgumentsAndPreflightItsVariable) {
  dir_.Write(".primus/hooks/benchmark/gemm/01_iters.sh", "echo extra.iters=3\necho \"subtask $PRIMUS_SUBTASK\"\n");
  ProcessResult gemm = Run({"direct", "--", "benchmark", "gemm", "--M", "64", "--N", "64", "--K", "64", "--json"});
  ASSERT_EQ(gemm.exit_code, 0) << gemm.all();
  EXPECT_NE(gemm.err.find("[01_iters.sh] subtask gemm"), std::string::npos) << gemm.err;
  EXPECT_NE(gemm.out.find("\"iterations\": 3"), std::string::npos) << gemm.out;
  // An option the benchmark does not know is its usual error, naming it.
  dir_.Write(".primus/hooks/benchmark/gemm/02_bad.sh", "echo extra.no-such-option=1\n");
  ProcessResult bad = Run({"direct", "--", "benchmark", "gemm", "--M", "64", "--N", "64", "--K", "64"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_NE(bad.err.find("--no-such-option"), std::string::npos) << bad.err;

  EXPECT_EQ(Slurp(dir_.path() + "/order.txt"), "system benchmark gemm\nblog\nsystem benchmark gemm\nblog\n")
      << "the global hooks ran before each benchmark, once (not again in its workers)";
  fs::remove(dir_.path() + "/order.txt");
  dir_.Write(".primus/hooks/preflight/01_env.sh", "echo env.PREFLIGHT_HOOKED=1\n");
  ProcessResult listed = Run({"--dry-run", "direct", "--patch", "patch.sh", "--", "preflight"});
  ASSERT_EQ(listed.exit_code, 0) << listed.all();
  EXPECT_NE(listed.out.find("scripts that would run (none runs under --dry-run):\n  patch  ./patch.sh\n"), std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find("hook   bash .primus/hooks/preflight/01_env.sh"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("runner/helpers/hooks/global/01_blog.sh"), std::string::npos) << listed.out;
  EXPECT_FALSE(fs::exists(dir_.path() + "/order.txt")) << "nothing ran under --dry-run";
}

TEST_F(TaskHooksTest, ATaskThatStartsNothingRefusesAPatchInsteadOfIgnoringIt) {
  ProcessResult result = Run({"direct", "--patch", "patch.sh", "--", "analyze", "run", "."});
  EXPECT_EQ(result.exit_code, 2) << result.all();
  EXPECT_NE(result.err.find("--patch applies to train, run, benchmark and preflight, not to 'analyze'"),
            std::string::npos)
      << result.err;
  EXPECT_FALSE(fs::exists(dir_.path() + "/order.txt"));
}

TEST_F(TaskHooksTest, APythonHookBeforeTrainSeesTheExperimentAndSetsWhatTheWorkersSee) {
  dir_.Write("exp.yaml",
             "exp_name: api\nworkspace: out\nbackend: command\n"
             "command: {argv: [sh, -c, 'echo \"DATA=$DATA_DIR ARGS=$*\"', worker]}\n"
             "distributed: {nproc_per_node: 1}\n");
  dir_.Write("runner/helpers/hooks/train/pretrain/02_prepare.py",
             "from primus_hooks import context, set_env, add_args, skip\n"
             "ctx = context()\n"
             "if ctx.task != 'train':\n"
             "    skip('not a training run')\n"
             "set_env('DATA_DIR', ctx.config['exp_name'] + '-data@' + str(ctx.world_size))\n"
             "add_args(data_path='/data/x')\n");
  ProcessResult result = Run({"direct", "--", "train", "pretrain", "--config", "exp.yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("DATA=api-data@1 ARGS=--data-path /data/x"), std::string::npos) << result.all();
  EXPECT_EQ(Slurp(dir_.path() + "/order.txt"), "system train pretrain\nblog\n");
  fs::path experiment = fs::directory_iterator(dir_.path() + "/out")->path();
  nlohmann::json metadata = nlohmann::json::parse(Slurp((experiment / "metadata.json").string()));
  EXPECT_EQ(metadata["launch"]["hook_args"], nlohmann::json({"--data-path", "/data/x"}));
}

}  // namespace
}  // namespace primus::testing
