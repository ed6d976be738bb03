#include "hooks/hook_runner.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace primus::hooks {
namespace {

class HookRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/primus-hooks-XXXXXX";
    root_ = mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string Write(const std::string& relative, const std::string& body, bool executable = true) {
    std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << body;
    if (executable) chmod(path.c_str(), 0755);
    return path.string();
  }
  std::string root_;
};

TEST_F(HookRunnerTest, OrderIsDirectoriesThenGlobalTaskSubtaskThenLexical) {
  Write("builtin/train/pretrain/02_b.sh", "#!/bin/sh\necho b >> \"$LOG\"\n");
  Write("builtin/train/pretrain/01_a.sh", "#!/bin/sh\necho a >> \"$LOG\"\n");
  Write("builtin/global/00_g.sh", "#!/bin/sh\necho g >> \"$LOG\"\n");
  Write("builtin/train/00_t.sh", "#!/bin/sh\necho t >> \"$LOG\"\n");
  Write("builtin/benchmark/00_x.sh", "#!/bin/sh\necho WRONG >> \"$LOG\"\n");
  Write("project/train/pretrain/00_p.sh", "#!/bin/sh\necho p >> \"$LOG\"\n");
  auto hooks = FindHooks({{root_ + "/builtin", root_ + "/project", root_ + "/missing"}, "train", "pretrain"});
  ASSERT_TRUE(hooks.ok()) << hooks.error().Format();
  ASSERT_EQ(hooks->size(), 5u);
  HookContext context;
  context.env["LOG"] = root_ + "/order.log";
  auto outcome = RunScripts(*hooks, context);
  ASSERT_TRUE(outcome.ok()) << outcome.error().Format();
  std::ifstream log(root_ + "/order.log");
  std::string all((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "g\nt\na\nb\np\n");
}

TEST_F(HookRunnerTest, ProtocolLinesSetEnvAndExtraArguments) {
  Write("h/train/01_env.sh", "#!/bin/sh\necho env.DATA_PATH=/data/tokens\necho hello\necho extra.seq_length=4096\n");
  Write("h/train/02_sees_env.sh", "#!/bin/sh\necho env.SEEN=\"$DATA_PATH\"\n");
  auto hooks = FindHooks({{root_ + "/h"}, "train", "pretrain"});
  ASSERT_TRUE(hooks.ok());
  auto outcome = RunScripts(*hooks, {});
  ASSERT_TRUE(outcome.ok()) << outcome.error().Format();
  EXPECT_EQ(outcome->env.at("DATA_PATH"), "/data/tokens");
  EXPECT_EQ(outcome->env.at("SEEN"), "/data/tokens") << "a later hook sees an earlier hook's env";
  EXPECT_EQ(outcome->extra_args, (std::vector<std::string>{"--seq_length", "4096"}));
}

TEST_F(HookRunnerTest, FailingHookAbortsWithNameCodeAndTail) {
  std::string path = Write("h/train/01_fail.sh", "#!/bin/sh\necho preparing\necho 'dataset missing' >&2\nexit 3\n");
  Write("h/train/02_never.sh", "#!/bin/sh\ntouch \"$MARK\"\n");
  auto hooks = FindHooks({{root_ + "/h"}, "train", ""});
  HookContext context;
  context.env["MARK"] = root_ + "/ran";
  auto outcome = RunScripts(*hooks, context);
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.error().message.find(path), std::string::npos);
  EXPECT_NE(outcome.error().message.find("exit code 3"), std::string::npos);
  EXPECT_NE(outcome.error().message.find("dataset missing"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/ran")) << "no hook runs after a failure";
}

TEST_F(HookRunnerTest, PatchExitTwoIsSkippedOtherCodesAbort) {
  std::string skip = Write("p/skip.sh", "#!/bin/sh\nexit 2\n");
  std::string apply = Write("p/apply.sh", "#!/bin/sh\necho env.PATCHED=1\n", /*executable=*/false);
  std::string bad = Write("p/bad.sh", "#!/bin/sh\nexit 1\n");
  auto patches = PreparePatches({skip, apply});
  ASSERT_TRUE(patches.ok());
  EXPECT_EQ((*patches)[1].argv[0], "bash") << "a non-executable .sh runs under bash";
  auto outcome = RunScripts(*patches, {});
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->scripts[0].skipped);
  EXPECT_EQ(outcome->env.at("PATCHED"), "1");
  auto failing = RunScripts(*PreparePatches({bad}), {});
  ASSERT_FALSE(failing.ok());
  EXPECT_NE(failing.error().message.find("patch " + bad + " failed with exit code 1"), std::string::npos);
}

TEST_F(HookRunnerTest, MissingPatchAndUnrunnableHookAreNamed) {
  auto missing = PreparePatches({root_ + "/nope.sh"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope.sh does not exist"), std::string::npos);
  Write("h/train/01_notes.txt", "not a script", /*executable=*/false);
  auto hooks = FindHooks({{root_ + "/h"}, "train", ""});
  ASSERT_FALSE(hooks.ok());
  EXPECT_NE(hooks.error().message.find("01_notes.txt cannot be run"), std::string::npos);
}

TEST_F(HookRunnerTest, RunOnceAndTimeoutDirectives) {
  Write("h/train/01_download.once.sh", "#!/bin/sh\ntouch \"$MARK\"\n");
  Write("h/train/02_slow.sh", "#!/bin/sh\n# primus: timeout=0.3\nsleep 30\n");
  auto hooks = FindHooks({{root_ + "/h"}, "train", ""});
  ASSERT_TRUE(hooks.ok());
  EXPECT_TRUE((*hooks)[0].run_once);
  EXPECT_DOUBLE_EQ((*hooks)[1].timeout_s, 0.3);
  HookContext other_node;
  other_node.node_rank = 1;
  other_node.env["MARK"] = root_ + "/downloaded";
  auto outcome = RunScripts(*hooks, other_node);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/downloaded")) << "run-once hooks run on node 0 only";
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.error().message.find("timed out"), std::string::npos);
}

TEST(ProtocolTest, OnlyWellFormedLinesCount) {
  RunOutcome outcome;
  EXPECT_TRUE(ParseProtocolLine("env.A=b=c", &outcome));
  EXPECT_EQ(outcome.env["A"], "b=c");
  EXPECT_FALSE(ParseProtocolLine("environment ready", &outcome));
  EXPECT_FALSE(ParseProtocolLine("env.=x", &outcome));
  EXPECT_FALSE(ParseProtocolLine("extra.noequals", &outcome));
}

}  // namespace
}  // namespace primus::hooks
