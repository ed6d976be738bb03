// Megatron and TorchTitan cannot run on our CPU machines, so their command
// lines and job files are compared with golden files written from their
// documented flags (src/train/testdata/golden). Set PRIMUS_UPDATE_GOLDEN=1 to
// rewrite them after an intended change, then review the diff.
#include "train/backends.h"

#include <gtest/gtest.h>

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
  BackendInputs inputs{&experiment, "/out/llama3_8b_20251110_134522", {"--exit-interval", "200"}, "", {}};
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
  EXPECT_EQ(command.error().code, ExitCode::kEnvironment);
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
  ExperimentConfig experiment;
  ExperimentRequest request;
  request.file = std::string(PRIMUS_SOURCE_DIR) + "/examples/gpt/configs/tiny-cpu.yaml";
  auto loaded = LoadExperiment(request);
  if (!loaded.ok()) GTEST_SKIP() << "examples/gpt not present: " << loaded.error().Format();
  experiment = *loaded;
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
