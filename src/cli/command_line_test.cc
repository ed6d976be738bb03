// The grammar against the command lines of the user's documents and the
// malformed ones users really type.
#include "cli/command_line.h"

#include <gtest/gtest.h>

#include "util/strings.h"

namespace primus::cli {
namespace {

CommandLine Parse(const std::string& line) {
  auto parsed = ParseCommandLine(Split(line, ' '));
  EXPECT_TRUE(parsed.ok()) << line << "\n" << (parsed.ok() ? "" : parsed.error().Format());
  return parsed.ok() ? *parsed : CommandLine{};
}

Error ParseError(const std::string& line) {
  auto parsed = ParseCommandLine(Split(line, ' '));
  EXPECT_FALSE(parsed.ok()) << line;
  return parsed.ok() ? Error{} : parsed.error();
}

std::string Option(const runtime::ModeInvocation& mode, const std::string& canonical) {
  for (const auto& option : mode.options) {
    if (option.spec->names.front() == canonical) return option.value;
  }
  return "<absent>";
}

TEST(CommandLineTest, DirectTrain) {
  CommandLine c = Parse("direct -- train pretrain --config deepseek_v2.yaml");
  EXPECT_EQ(c.kind, CommandLine::Kind::kLaunch);
  ASSERT_EQ(c.invocation.chain.size(), 1u);
  EXPECT_EQ(c.invocation.chain[0].mode, "direct");
  EXPECT_EQ(c.invocation.task, "train");
  EXPECT_EQ(c.invocation.task_args, (std::vector<std::string>{"pretrain", "--config", "deepseek_v2.yaml"}));
}

TEST(CommandLineTest, ContainerWithImageAndMount) {
  CommandLine c = Parse("container --image rocm/megatron-lm:v25.8_py310 --mount /data:/data -- train pretrain --config c.yaml");
  ASSERT_EQ(c.invocation.chain.size(), 1u);
  EXPECT_EQ(Option(c.invocation.chain[0], "--image"), "rocm/megatron-lm:v25.8_py310");
  EXPECT_EQ(Option(c.invocation.chain[0], "--mount"), "/data:/data");
  EXPECT_EQ(c.invocation.task, "train");
}

TEST(CommandLineTest, ContainerWithoutImageUsesConfig) {
  CommandLine c = Parse("container -- benchmark gemm -M 4096");
  EXPECT_EQ(c.invocation.task, "benchmark");
  EXPECT_EQ(c.invocation.task_args, (std::vector<std::string>{"gemm", "-M", "4096"}));
}

TEST(CommandLineTest, SlurmSrunDefaultsAndPassThrough) {
  CommandLine c = Parse("slurm srun -N 8 -- benchmark gemm -M 4096");
  EXPECT_EQ(c.invocation.chain[0].action, "srun");
  EXPECT_EQ(Option(c.invocation.chain[0], "--nodes"), "8");
  CommandLine implicit = Parse("slurm -N 8 -- train pretrain");
  EXPECT_EQ(implicit.invocation.chain[0].action, "srun");
}

TEST(CommandLineTest, SlurmSrunIntoContainer) {
  CommandLine c = Parse("slurm srun -N 2 -p gpu-test -- container --image IMG -- train pretrain --config c.yaml");
  ASSERT_EQ(c.invocation.chain.size(), 2u);
  EXPECT_EQ(Option(c.invocation.chain[0], "--partition"), "gpu-test");
  EXPECT_EQ(c.invocation.chain[1].mode, "container");
  EXPECT_EQ(Option(c.invocation.chain[1], "--image"), "IMG");
  EXPECT_EQ(c.invocation.task_args, (std::vector<std::string>{"pretrain", "--config", "c.yaml"}));
}

TEST(CommandLineTest, SlurmSbatchProductionLine) {
  CommandLine c = Parse(
      "slurm sbatch -N 64 -p gpu-prod -t 72:00:00 --job-name=deepseek-v2-prod -o logs/train_%j.log -- container "
      "--image IMG -- train pretrain --config c.yaml");
  const auto& slurm = c.invocation.chain[0];
  EXPECT_EQ(slurm.action, "sbatch");
  EXPECT_EQ(Option(slurm, "--nodes"), "64");
  EXPECT_EQ(Option(slurm, "--time"), "72:00:00");
  EXPECT_EQ(slurm.passthrough, (std::vector<std::string>{"--job-name=deepseek-v2-prod", "-o", "logs/train_%j.log"}));
  EXPECT_EQ(c.invocation.chain[1].mode, "container");
}

TEST(CommandLineTest, DirectPatchAndDebug) {
  CommandLine c = Parse("direct --patch fixes/workaround_rccl.sh -- train pretrain --config config.yaml");
  EXPECT_EQ(Option(c.invocation.chain[0], "--patch"), "fixes/workaround_rccl.sh");
  CommandLine debug = Parse("direct --debug -- train pretrain --config c.yaml");
  ASSERT_EQ(debug.globals.config_flags.size(), 1u);
  EXPECT_EQ(debug.globals.config_flags[0].spec->names.front(), "--debug");
}

TEST(CommandLineTest, OtherSeedTasks) {
  EXPECT_EQ(Parse("direct -- benchmark gemm --dtype bf16 -M 8192").invocation.task, "benchmark");
  EXPECT_EQ(Parse("direct -- preflight check --gpu --network").invocation.task, "preflight");
  EXPECT_EQ(Parse("direct -- analyze topology --visualize").invocation.task, "analyze");
  CommandLine replay = Parse("direct -- train pretrain --replay output/exp_2025_11_10_134522/");
  EXPECT_EQ(replay.invocation.task_args.back(), "output/exp_2025_11_10_134522/");
  CommandLine env = Parse("container --env MASTER_ADDR=10.1.1.1 -- train pretrain --config c.yaml");
  EXPECT_EQ(Option(env.invocation.chain[0], "--env"), "MASTER_ADDR=10.1.1.1");
}

TEST(CommandLineTest, TaskShorthandMeansDirect) {
  CommandLine c = Parse("train pretrain --config x.yaml");
  EXPECT_TRUE(c.invocation.implicit_direct);
  EXPECT_EQ(c.invocation.chain[0].mode, "direct");
  EXPECT_EQ(c.invocation.task, "train");
}

TEST(CommandLineTest, TorchrunSpellingsAndGlobalsBeforeMode) {
  CommandLine c = Parse("--dry-run --config launcher.yaml direct --nproc_per_node=4 --master_port 29500 -- run /bin/true");
  EXPECT_TRUE(c.globals.dry_run);
  EXPECT_EQ(c.globals.config_file, "launcher.yaml");
  EXPECT_EQ(Option(c.invocation.chain[0], "--nproc-per-node"), "4");
  EXPECT_EQ(Option(c.invocation.chain[0], "--master-port"), "29500");
}

TEST(CommandLineTest, RunKeepsCommandArgumentsVerbatim) {
  CommandLine c = Parse("direct -- run python3 train.py --config x --help");
  EXPECT_EQ(c.invocation.task_args, (std::vector<std::string>{"python3", "train.py", "--config", "x", "--help"}));
}

TEST(CommandLineTest, HelpAtEveryLevel) {
  EXPECT_EQ(Parse("--help").kind, CommandLine::Kind::kHelp);
  CommandLine mode = Parse("slurm --help");
  EXPECT_EQ(mode.kind, CommandLine::Kind::kHelp);
  EXPECT_EQ(mode.help_topic, "slurm");
  CommandLine task = Parse("direct -- benchmark --help");
  EXPECT_EQ(task.kind, CommandLine::Kind::kLaunch);  // dispatch sees the task's --help
  EXPECT_EQ(Parse("help train").help_topic, "train");
  EXPECT_EQ(Parse("--version").kind, CommandLine::Kind::kVersion);
}

TEST(CommandLineTest, UnknownModeSuggests) {
  Error e = ParseError("dirct -- train pretrain");
  EXPECT_EQ(e.code, ExitCode::kUsage);
  EXPECT_NE(e.message.find("unknown mode or task 'dirct' (did you mean 'direct'?)"), std::string::npos);
}

TEST(CommandLineTest, UnknownTaskSuggests) {
  Error e = ParseError("direct -- trian pretrain");
  EXPECT_NE(e.message.find("unknown task 'trian'"), std::string::npos);
  EXPECT_NE(e.message.find("did you mean 'train'?"), std::string::npos);
}

TEST(CommandLineTest, UnknownDirectFlagSuggests) {
  Error e = ParseError("direct --nproc-per-nod 2 -- run /bin/true");
  EXPECT_NE(e.message.find("did you mean '--nproc-per-node'"), std::string::npos);
}

TEST(CommandLineTest, MissingTaskAndSeparator) {
  EXPECT_NE(ParseError("direct").message.find("missing task"), std::string::npos);
  EXPECT_NE(ParseError("slurm srun -N 2").message.find("no '--'"), std::string::npos);
  auto nothing = ParseCommandLine({});
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.error().message.find("missing mode or task"), std::string::npos);
}

TEST(CommandLineTest, ChainsOnlyWhereTheyMakeSense) {
  Error inside = ParseError("container --image IMG -- slurm srun -- train pretrain");
  EXPECT_NE(inside.message.find("mode 'slurm' cannot run inside mode 'container'"), std::string::npos);
  EXPECT_NE(ParseError("direct -- container -- train").message.find("cannot run inside"), std::string::npos);
}

TEST(CommandLineTest, UnknownGlobalFlag) {
  Error e = ParseError("--dryrun direct -- train pretrain");
  EXPECT_NE(e.message.find("did you mean '--dry-run'"), std::string::npos);
}

TEST(CommandLineTest, DockerShortHostnameFlagIsNotHelp) {
  CommandLine c = Parse("container --image IMG -h myhost -- run /bin/true");
  EXPECT_EQ(c.kind, CommandLine::Kind::kLaunch);
  EXPECT_EQ(c.invocation.chain[0].passthrough, (std::vector<std::string>{"-h", "myhost"}));
}

TEST(CommandLineTest, DirectScriptIsTheRunTaskWithPython) {
  CommandLine c = Parse("direct --single --script examples/debug_run.py -- --arg1 val1");
  EXPECT_EQ(c.kind, CommandLine::Kind::kLaunch);
  EXPECT_EQ(c.invocation.task, "run");
  EXPECT_EQ(c.invocation.task_args, (std::vector<std::string>{"python3", "examples/debug_run.py", "--arg1", "val1"}));
  ASSERT_EQ(c.invocation.chain.size(), 1u);
  EXPECT_EQ(c.invocation.chain[0].written, (std::vector<std::string>{"--single"})) << "--script is not handed on";
  EXPECT_EQ(Option(c.invocation.chain[0], "--script"), "<absent>");
  ASSERT_EQ(c.invocation.notes.size(), 1u);
  EXPECT_NE(c.invocation.notes[0].find("run python3 examples/debug_run.py"), std::string::npos);

  CommandLine with_task_words = Parse("direct --script=run_distributed.py -- train pretrain --config conf.yaml");
  EXPECT_EQ(with_task_words.invocation.task_args,
            (std::vector<std::string>{"python3", "run_distributed.py", "train", "pretrain", "--config", "conf.yaml"}));
  CommandLine nested = Parse("container --image I -- direct --script s.py -- a");
  ASSERT_EQ(nested.invocation.chain.size(), 2u);
  EXPECT_TRUE(nested.invocation.chain[1].written.empty());
  EXPECT_EQ(nested.invocation.task_args, (std::vector<std::string>{"python3", "s.py", "a"}));
}

TEST(CommandLineTest, NumaSpellingsOfPrimus) {
  CommandLine on = Parse("direct --numa -- run true");
  EXPECT_EQ(Option(on.invocation.chain[0], "--numa-bind"), "true");
  CommandLine off = Parse("direct --no-numa -- run true");
  EXPECT_EQ(Option(off.invocation.chain[0], "--no-numa"), "false");
}

TEST(CommandLineTest, HelpAfterTheSeparatorListsTasks) {
  for (const char* line : {"direct -- --help", "direct --nproc-per-node 2 -- -h", "container --image I -- --help"}) {
    CommandLine c = Parse(line);
    EXPECT_EQ(c.kind, CommandLine::Kind::kHelp) << line;
    EXPECT_EQ(c.help_topic, "tasks") << line;
  }
}

TEST(CommandLineTest, LogFileIsReadHereAndNeverHandedOn) {
  CommandLine direct = Parse("direct --log_file logs/run.txt -- run true");
  EXPECT_EQ(direct.globals.log_file, "logs/run.txt");
  EXPECT_TRUE(direct.invocation.chain[0].written.empty());
  CommandLine container = Parse("container --image I --log_file=c.log --cpus 4 -- train pretrain");
  EXPECT_EQ(container.globals.log_file, "c.log");
  EXPECT_EQ(container.invocation.chain[0].passthrough, (std::vector<std::string>{"--cpus", "4"})) << "not an engine option";
  EXPECT_EQ(container.invocation.chain[0].written, (std::vector<std::string>{"--image", "I", "--cpus", "4"}));
  CommandLine slurm = Parse("slurm srun -N 2 -- direct --log-file x.log -- run true");
  EXPECT_EQ(slurm.globals.log_file, "x.log");
  EXPECT_TRUE(slurm.invocation.chain[1].written.empty()) << "the nodes do not write it again";
}

// Primus's runner (runner/primus-cli-{container,slurm}.sh): the inner mode's
// options right after '--' with its name left out; container's options end
// at the first task word; --silent.
TEST(CommandLineTest, PrimusRunnerSyntax) {
  CommandLine logged = Parse("container --image I -- --log_file F -- train pretrain --config e.yaml");
  ASSERT_EQ(logged.invocation.chain.size(), 2u);
  EXPECT_EQ(logged.invocation.chain[1].mode, "direct");
  EXPECT_EQ(logged.globals.log_file, "F");
  EXPECT_EQ(logged.invocation.task, "train");
  ASSERT_FALSE(logged.invocation.notes.empty());
  EXPECT_NE(logged.invocation.notes[0].find("read as 'container ... -- direct --log_file'"), std::string::npos);

  CommandLine slurm = Parse("slurm srun -N 2 -- --image I train pretrain --config e.yaml");
  ASSERT_EQ(slurm.invocation.chain.size(), 2u);
  EXPECT_EQ(slurm.invocation.chain[1].mode, "container");
  EXPECT_EQ(slurm.invocation.chain[1].written, (std::vector<std::string>{"--image", "I"}));
  EXPECT_EQ(slurm.invocation.task, "train");
  EXPECT_EQ(slurm.invocation.task_args, (std::vector<std::string>{"pretrain", "--config", "e.yaml"}));
  // A direct option picks direct; an engine option no table knows, container.
  EXPECT_EQ(Parse("slurm srun -N 2 -- --numa -- run true").invocation.chain[1].mode, "direct");
  CommandLine engine = Parse("slurm srun -N 2 -- --privileged --image I -- run true");
  EXPECT_EQ(engine.invocation.chain[1].mode, "container");
  EXPECT_EQ(engine.invocation.chain[1].passthrough, (std::vector<std::string>{"--privileged"}));
  // Inside container only direct may follow: an option it does not know is an error naming it.
  Error unknown = ParseError("container --image I -- --bogus -- run true");
  EXPECT_NE(unknown.message.find("--bogus"), std::string::npos) << unknown.message;

  // container's options end at the first task word, unless an engine flag may take it as its value.
  CommandLine bare = Parse("container --image I preflight --quick");
  EXPECT_EQ(bare.invocation.task, "preflight");
  EXPECT_EQ(bare.invocation.task_args, (std::vector<std::string>{"--quick"}));
  CommandLine named = Parse("container --image I --label train -- run true");
  EXPECT_EQ(named.invocation.chain[0].passthrough, (std::vector<std::string>{"--label", "train"}));
  EXPECT_EQ(named.invocation.task, "run");

  // Global options before slurm's action (its usage: slurm [--config F] [--debug] [--dry-run] [srun|sbatch]).
  CommandLine before = Parse("slurm --dry-run --log-level debug srun -N 4 -- container -- train");
  EXPECT_TRUE(before.globals.dry_run);
  EXPECT_EQ(before.invocation.chain[0].action, "srun");
  EXPECT_EQ(before.invocation.chain[1].mode, "container");
  // direct's own option after its '--' is named as such.
  Error misplaced = ParseError("direct -- --nproc-per-node=8 data diffusion-encoded");
  EXPECT_NE(misplaced.message.find("is an option of direct, written after its '--'"), std::string::npos)
      << misplaced.message;
  EXPECT_NE(misplaced.hint.find("primus-cli direct --nproc-per-node=8 -- data"), std::string::npos) << misplaced.hint;

  CommandLine silent = Parse("direct --silent -- preflight --quick");
  EXPECT_TRUE(silent.globals.silent);
  EXPECT_TRUE(silent.invocation.chain[0].written.empty()) << "read here, never handed on";
}

TEST(CommandLineTest, TorchrunAsAWordOrAsTheProgramIsDirectRun) {
  Environment env({{"PET_NNODES", "1"}});
  auto word = ParseCommandLine(Split("--debug torchrun --nproc_per_node 2 --dry-run train.py --lr 1", ' '), env);
  ASSERT_TRUE(word.ok()) << word.error().Format();
  auto link = ParseCommandLine(Split("--debug --nproc_per_node 2 --dry-run train.py --lr 1", ' '), env, "torchrun");
  ASSERT_TRUE(link.ok()) << link.error().Format();
  for (const CommandLine* c : {&*word, &*link}) {
    EXPECT_EQ(c->kind, CommandLine::Kind::kLaunch);
    ASSERT_EQ(c->invocation.chain.size(), 1u);
    EXPECT_EQ(c->invocation.chain[0].mode, "direct");
    EXPECT_EQ(c->invocation.program, "torchrun");
    EXPECT_EQ(c->invocation.task, "run");
    EXPECT_EQ(c->invocation.task_args, (std::vector<std::string>{"python3", "-u", "train.py", "--lr", "1"}));
    EXPECT_TRUE(c->globals.dry_run);
    ASSERT_EQ(c->globals.config_flags.size(), 1u);
    EXPECT_EQ(c->globals.config_flags[0].spec->names.front(), "--debug");
    EXPECT_EQ(c->typed.front(), "torchrun");
    bool found = false;
    for (const auto& setting : c->translated_settings) {
      if (setting.key == "direct.nproc_per_node" && setting.values == std::vector<std::string>{"2"}) found = true;
    }
    EXPECT_TRUE(found);
    EXPECT_FALSE(c->program_defaults.empty());
  }
  EXPECT_EQ(link->typed, (std::vector<std::string>{"torchrun", "--debug", "--nproc_per_node", "2", "--dry-run",
                                                   "train.py", "--lr", "1"}));
}

TEST(CommandLineTest, TorchrunHelpVersionAndErrors) {
  auto help = ParseCommandLine({"--help"}, {}, "torchrun");
  ASSERT_TRUE(help.ok());
  EXPECT_EQ(help->kind, CommandLine::Kind::kHelp);
  EXPECT_EQ(help->help_topic, "torchrun");
  auto version = ParseCommandLine({"torchrun", "--version"});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->kind, CommandLine::Kind::kVersion);
  Error bad = ParseError("torchrun --nnodes 1:2 t.py");
  EXPECT_EQ(bad.code, ExitCode::kUsage);
  Error inside = ParseError("direct -- torchrun t.py");
  EXPECT_NE(inside.message.find("torchrun is not a task"), std::string::npos) << inside.message;
  Error typo = ParseError("torchrn t.py");
  EXPECT_NE(typo.message.find("did you mean 'torchrun'"), std::string::npos) << typo.message;
}

}  // namespace
}  // namespace primus::cli
