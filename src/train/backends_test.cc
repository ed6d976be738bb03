// Megatron and TorchTitan cannot run on our CPU machines, so their command
// lines and job files are compared with golden files written from their
// documented flags (src/train/testdata/golden). Set PRIMUS_UPDATE_GOLDEN=1 to
// rewrite them after an intended change, then review the diff.
#include "train/backends.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/strings.h"

namespace primus::train {
namespace {

std::string TestData(const std::string& name) { return std::string(PRIMUS_SOURCE_DIR) + "/src/train/testdata/" + name; }

void ExpectGolden(const std::string& name, const std::string& actual) {
  std::string path = TestData("golden/" + name);
  if (std::getenv("PRIMUS_UPDATE_GOLDEN")) std::ofstream(path) << actual;
  std::ifstream in(path);
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "golden file " << path << " differs";
}

ExperimentConfig Load(const std::string& file, int world_size) {
  ExperimentRequest request;
  request.file = TestData(file);
  auto experiment = LoadExperiment(request);
  EXPECT_TRUE(experiment.ok()) << experiment.error().Format();
  Status resolved = ResolveForWorldSize(request, world_size, &*experiment);
  EXPECT_TRUE(resolved.ok()) << resolved.error().Format();
  return *experiment;
}

TEST(BackendsTest, MegatronCommandLineMatchesGolden) {
  ExperimentConfig experiment = Load("megatron_llama.yaml", 16);
  BackendRequest inputs{&experiment, "/out/llama3_8b_20251110_134522", {"--exit-interval", "200"}, "", {}};
  auto command = BuildBackendCommand(inputs);
  ASSERT_TRUE(command.ok()) << command.error().Format();
  ExpectGolden("megatron_llama.argv", Join(command->argv, "\n") + "\n");
  EXPECT_EQ(command->env.at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
}

TEST(BackendsTest, MegatronWithoutCheckoutNamesTheVariable) {
  ExperimentConfig experiment = Load("megatron_llama.yaml", 16);
  ASSERT_TRUE(experiment.resolved.Set("megatron.path", config::Value::String("")).ok());
  auto command = BuildBackendCommand({&experiment, "/out", {}, "", {}});
  ASSERT_FALSE(command.ok());
  EXPECT_EQ(command.error().code, ExitCode::kUnavailable);
  EXPECT_NE(command.error().hint.find("MEGATRON_PATH"), std::string::npos);
  auto from_env = BuildBackendCommand({&experiment, "/out", {}, "", {{"MEGATRON_PATH", "/env/Megatron"}}});
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->argv[1], "/env/Megatron/pretrain_gpt.py");
}

TEST(BackendsTest, TorchTitanJobFileMatchesGolden) {
  ExperimentConfig experiment = Load("torchtitan_llama.yaml", 8);
  auto command = BuildBackendCommand({&experiment, "/out/titan", {}, "", {}});
  ASSERT_TRUE(command.ok()) << command.error().Format();
  ASSERT_EQ(command->files.size(), 1u);
  EXPECT_EQ(command->files.begin()->first, "/out/titan/config/torchtitan.toml");
  std::string toml = command->files.begin()->second;
  toml = toml.substr(toml.find('\n') + 1);  // the first line names the source file's absolute path
  ExpectGolden("torchtitan_llama.toml", toml);
  EXPECT_EQ(Join(command->argv, " "), "/opt/venv/bin/python -m torchtitan.train --job.config_file /out/titan/config/torchtitan.toml");
}

TEST(BackendsTest, TorchBackendMapsTrainingKeysToTrainerFlags) {
  // As a user runs it: from the repository, where torch.script's relative path points.
  ASSERT_EQ(chdir(PRIMUS_SOURCE_DIR), 0);
  ExperimentRequest request;
  request.file = "examples/gpt/configs/tiny-cpu.yaml";
  auto loaded = LoadExperiment(request);
  ASSERT_TRUE(loaded.ok()) << loaded.error().Format();
  ExperimentConfig experiment = *loaded;
  ASSERT_TRUE(ResolveForWorldSize(request, 2, &experiment).ok());
  auto command = BuildBackendCommand({&experiment, "/out/tiny", {"--fail-at-step", "5"}, "none", {}});
  ASSERT_TRUE(command.ok()) << command.error().Format();
  std::string line = Join(command->argv, " ");
  EXPECT_NE(line.find("examples/gpt/train.py --model tiny --steps "), std::string::npos) << line;
  EXPECT_NE(line.find("--ckpt-dir /out/tiny/checkpoints"), std::string::npos) << line;
  EXPECT_NE(line.find("--resume none"), std::string::npos) << "the command line's --resume wins";
  EXPECT_NE(line.find("--metrics-file /out/tiny/metrics.jsonl"), std::string::npos);
  EXPECT_EQ(command->argv.back(), "5") << "extra arguments come last";
}

TEST(BackendsTest, CondaEnvironmentRunsThroughCondaRun) {
  ExperimentConfig experiment = Load("torchtitan_llama.yaml", 8);
  experiment.conda_env = "titan";
  auto command = BuildBackendCommand({&experiment, "/out", {}, "", {}});
  ASSERT_TRUE(command.ok());
  EXPECT_EQ(Join(std::vector<std::string>(command->argv.begin(), command->argv.begin() + 6), " "),
            "conda run --no-capture-output -n titan python");
}

}  // namespace
}  // namespace primus::train

namespace primus::train {
namespace {

std::string Line(const BackendCommand& command) { return Join(command.argv, " "); }

TEST(BackendsTest, MegatronPosttrainRunsItsSftEntry) {
  ExperimentConfig experiment = Load("megatron_llama.yaml", 16);
  BackendRequest inputs{&experiment, "/out", {}, "", {}, "posttrain"};
  auto command = BuildBackendCommand(inputs);
  ASSERT_TRUE(command.ok()) << command.error().Format();
  EXPECT_EQ(command->argv[1], "/opt/Megatron-LM/pretrain_gpt.py") << "Megatron-LM's pretrain and SFT entry";
  EXPECT_EQ(command->argv.back(), "--sft");
  auto pretrain = BuildBackendCommand({&experiment, "/out", {}, "", {}, "pretrain"});
  EXPECT_EQ(Line(*pretrain).find("--sft"), std::string::npos);

  ASSERT_TRUE(experiment.resolved.Set("megatron.posttrain_script", config::Value::String("my_sft.py")).ok());
  ASSERT_TRUE(experiment.resolved.Set("megatron.args.sft", config::Value::Bool(false)).ok());
  auto own = BuildBackendCommand(inputs);
  ASSERT_TRUE(own.ok()) << own.error().Format();
  EXPECT_EQ(own->argv[1], "/opt/Megatron-LM/my_sft.py");
  EXPECT_EQ(Line(*own).find("--sft"), std::string::npos) << "sft: false leaves it out";
}

TEST(BackendsTest, MegatronMaxPositionEmbeddingsComesFromTheModelWhenGiven) {
  ExperimentConfig experiment = Load("megatron_llama.yaml", 16);
  ASSERT_TRUE(experiment.resolved.Set("model.max_position_embeddings", config::Value::Int(131072)).ok());
  auto command = BuildBackendCommand({&experiment, "/out", {}, "", {}});
  ASSERT_TRUE(command.ok()) << command.error().Format();
  std::string line = Line(*command);
  EXPECT_NE(line.find("--seq-length 8192"), std::string::npos);
  EXPECT_NE(line.find("--max-position-embeddings 131072"), std::string::npos) << line;
  EXPECT_EQ(line.find("--max-position-embeddings 8192"), std::string::npos) << "given once, by the model";
}

TEST(BackendsTest, TorchTitanPosttrainNeedsAModuleToRun) {
  ExperimentConfig experiment = Load("torchtitan_llama.yaml", 8);
  BackendRequest inputs{&experiment, "/out/titan", {}, "", {}, "posttrain"};
  Status refused = CheckBackendSubtask(experiment, "posttrain");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ExitCode::kConfig);
  EXPECT_EQ(refused.error().message,
            "train posttrain with the torchtitan backend needs torchtitan.posttrain_module: TorchTitan v0.2.2 has no "
            "post-training entry");
  EXPECT_FALSE(BuildBackendCommand(inputs).ok());
  EXPECT_TRUE(CheckBackendSubtask(experiment, "pretrain").ok());
  ASSERT_TRUE(experiment.resolved.Set("torchtitan.posttrain_module", config::Value::String("my.sft")).ok());
  auto command = BuildBackendCommand(inputs);
  ASSERT_TRUE(command.ok()) << command.error().Format();
  EXPECT_EQ(Line(*command), "/opt/venv/bin/python -m my.sft --job.config_file /out/titan/config/torchtitan.toml");
}

TEST(BackendsTest, TorchTitanBatchSizesAreMicroBatchAndMicroTimesDpTimesAccumulation) {
  ExperimentRequest request;
  request.file = TestData("torchtitan_llama.yaml");
  request.overrides = {"parallelism.global_batch=48", "training.dtype=fp32"};
  auto experiment = LoadExperiment(request);
  ASSERT_TRUE(experiment.ok()) << experiment.error().Format();
  ASSERT_TRUE(ResolveForWorldSize(request, 12, &*experiment).ok());  // TP 2: DP 6, 48 = 2 x 6 x 4
  EXPECT_EQ(experiment->grad_accum, 4);
  auto command = BuildBackendCommand({&*experiment, "/out", {}, "", {}});
  ASSERT_TRUE(command.ok()) << command.error().Format();
  const std::string& toml = command->files.begin()->second;
  EXPECT_NE(toml.find("local_batch_size = 2\nglobal_batch_size = 48\n"), std::string::npos) << toml;
  EXPECT_NE(toml.find("mixed_precision_param = \"float32\""), std::string::npos) << "fp32 is not left to the default bf16";
}

TEST(BackendsTest, TorchTitanStringsAreTomlEscaped) {
  ExperimentConfig experiment = Load("torchtitan_llama.yaml", 8);
  ASSERT_TRUE(experiment.resolved.Set("model.tokenizer_path", config::Value::String("a\"b\\c\nd\x1b")).ok());
  auto command = BuildBackendCommand({&experiment, "/out", {}, "", {}});
  ASSERT_TRUE(command.ok());
  EXPECT_NE(command->files.begin()->second.find("tokenizer_path = \"a\\\"b\\\\c\\nd\\u001b\"\n"), std::string::npos)
      << command->files.begin()->second;
}

}  // namespace
}  // namespace primus::train
