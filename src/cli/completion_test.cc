#include "cli/completion.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace primus::cli {
namespace {

bool Has(const Completion& completion, const std::string& word) {
  return std::find(completion.words.begin(), completion.words.end(), word) != completion.words.end();
}

TEST(CompletionTest, ModesTasksAndBuiltinsAtTheTop) {
  Completion modes = Complete({"di"});
  EXPECT_EQ(modes.words, std::vector<std::string>{"direct"});
  EXPECT_EQ(modes.files, Completion::Files::kNone);
  EXPECT_TRUE(Has(Complete({""}), "slurm"));
  EXPECT_TRUE(Has(Complete({""}), "train"));
  EXPECT_TRUE(Has(Complete({""}), "completion"));
  EXPECT_EQ(Complete({"--debug", "be"}).words, std::vector<std::string>{"benchmark"});
}

TEST(CompletionTest, AfterTheSeparatorTasksAndTheModesThisOneWraps) {
  EXPECT_EQ(Complete({"direct", "--", "tr"}).words, std::vector<std::string>{"train"});
  Completion slurm = Complete({"slurm", "sbatch", "-N", "2", "--", ""});
  EXPECT_TRUE(Has(slurm, "container"));
  EXPECT_TRUE(Has(slurm, "train"));
  EXPECT_FALSE(Has(slurm, "slurm"));
}

TEST(CompletionTest, SubtasksAndActions) {
  EXPECT_EQ(Complete({"direct", "--", "train", "pre"}).words, std::vector<std::string>{"pretrain"});
  EXPECT_EQ(Complete({"benchmark", "g"}).words, (std::vector<std::string>{"gemm", "gemm-dense", "gemm-deepseek"}));
  Completion actions = Complete({"slurm", ""});
  EXPECT_TRUE(Has(actions, "srun"));
  EXPECT_TRUE(Has(actions, "sbatch"));
}

TEST(CompletionTest, FlagsOfTheLevelTheCursorIsAt) {
  Completion mode = Complete({"direct", "--nproc"});
  EXPECT_EQ(mode.words, std::vector<std::string>{"--nproc-per-node"});
  EXPECT_TRUE(Has(Complete({"direct", "--de"}), "--debug"));  // global options work among mode options
  Completion gemm = Complete({"direct", "--", "benchmark", "gemm", "--dt"});
  EXPECT_EQ(gemm.words, std::vector<std::string>{"--dtype"});
  EXPECT_TRUE(Has(Complete({"preflight", "--"}), "--network"));
}

TEST(CompletionTest, EnumeratedValuesComeFromTheValueName) {
  Completion dtypes = Complete({"benchmark", "gemm", "--dtype", ""});
  EXPECT_EQ(dtypes.words, (std::vector<std::string>{"bf16", "fp16", "fp32", "tf32", "fp8"}));
  EXPECT_EQ(Complete({"--log-level", "w"}).words, std::vector<std::string>{"warn"});
  EXPECT_EQ(Complete({"container", "--engine", ""}).words, (std::vector<std::string>{"docker", "podman"}));
  EXPECT_EQ(Complete({"train", "pretrain", "--backend", "t"}).words, (std::vector<std::string>{"torch", "torchtitan"}));
  // "N|auto": the literal value only.
  EXPECT_EQ(Complete({"direct", "--nproc-per-node", ""}).words, std::vector<std::string>{"auto"});
}

TEST(CompletionTest, ValuesAfterAnEqualsSignInEitherSpelling) {
  EXPECT_EQ(Complete({"benchmark", "gemm", "--dtype=fp1"}).words, std::vector<std::string>{"--dtype=fp16"});
  // bash breaks words at '=': "--dtype" "=" "fp1", or "--dtype" "=" with the cursor after it.
  EXPECT_EQ(Complete({"benchmark", "gemm", "--dtype", "=", "fp1"}).words, std::vector<std::string>{"fp16"});
  EXPECT_EQ(Complete({"benchmark", "gemm", "--dtype", "="}).words.size(), 5u);
}

TEST(CompletionTest, FileValuedFlagsAskForFiles) {
  EXPECT_EQ(Complete({"train", "pretrain", "--config", ""}).files, Completion::Files::kYaml);
  EXPECT_EQ(Complete({"--config", ""}).files, Completion::Files::kYaml);
  EXPECT_EQ(Complete({"direct", "--log-dir", ""}).files, Completion::Files::kDirs);
  EXPECT_EQ(Complete({"direct", "--patch", ""}).files, Completion::Files::kAny);
  Completion resume = Complete({"train", "pretrain", "--resume", ""});
  EXPECT_EQ(resume.words, (std::vector<std::string>{"auto", "none"}));
  EXPECT_EQ(resume.files, Completion::Files::kAny);
}

TEST(CompletionTest, ValuesAreSkippedWhileWalking) {
  // "--config x.yaml" is a flag and its value, not a mode.
  EXPECT_EQ(Complete({"--config", "x.yaml", "dir"}).words, std::vector<std::string>{"direct"});
  EXPECT_EQ(Complete({"direct", "--nproc-per-node", "2", "--", "train", "p"}).words,
            (std::vector<std::string>{"pretrain", "posttrain"}));
}

TEST(CompletionTest, BuiltinCommandsArguments) {
  EXPECT_EQ(Complete({"completion", ""}).words, (std::vector<std::string>{"bash", "zsh", "fish"}));
  EXPECT_EQ(Complete({"config", ""}).words, std::vector<std::string>{"show"});
  EXPECT_TRUE(Has(Complete({"help", "sl"}), "slurm"));
}

TEST(CompletionTest, FormatNamesTheFilesFirst) {
  EXPECT_EQ(FormatCompletion(Completion{Completion::Files::kYaml, {"a", "b"}}), "yaml\na\nb\n");
  EXPECT_EQ(FormatCompletion(Completion{}), "none\n");
}

TEST(CompletionTest, ScriptsForThreeShells) {
  EXPECT_NE(CompletionScript("bash")->find("complete -F _primus_cli primus-cli"), std::string::npos);
  EXPECT_NE(CompletionScript("zsh")->find("#compdef primus-cli"), std::string::npos);
  EXPECT_NE(CompletionScript("fish")->find("complete -c primus-cli"), std::string::npos);
  auto unknown = CompletionScript("bsh");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("did you mean 'bash'?"), std::string::npos) << unknown.error().message;
}

// What the issue found missing: the job commands, info, config show, --set,
// init's models and backends, and torchrun (the link and the built-in).
TEST(CompletionTest, EveryCommandCompletesItsFlagsAndTheWordsItTakes) {
  EXPECT_TRUE(Has(Complete({"monitor", "--"}), "--once"));
  EXPECT_TRUE(Has(Complete({"direct", "--", "monitor", "--i"}), "--interval"));
  EXPECT_TRUE(Has(Complete({"info", "--"}), "--json"));
  EXPECT_TRUE(Has(Complete({"config", "show", "--"}), "--experiment"));
  EXPECT_EQ(Complete({"config", "show", "--experiment", ""}).files, Completion::Files::kAny);
  EXPECT_EQ(Complete({"--set", "direct.max_re"}).words, std::vector<std::string>{"direct.max_restarts="});
  EXPECT_TRUE(Has(Complete({"init", ""}), "deepseek-v2-lite"));
  EXPECT_EQ(Complete({"init", "llama3-8b", "--backend", "torcht"}).words, std::vector<std::string>{"torchtitan"});
  EXPECT_TRUE(Has(Complete({"torchrun", "--nproc"}), "--nproc-per-node"));
  EXPECT_EQ(Complete({"torchrun", "--rdzv-backend", "c"}).words, std::vector<std::string>{"c10d"});
  Completion script = Complete({"torchrun", "--standalone", ""});
  EXPECT_EQ(script.files, Completion::Files::kAny) << "the training script";
  EXPECT_TRUE(Complete({"torchrun", "train.py", "--"}).words.empty()) << "the script's own arguments";
}

}  // namespace
}  // namespace primus::cli
