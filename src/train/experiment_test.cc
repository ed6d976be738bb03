#include "train/experiment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <utility>

namespace primus::train {
namespace {

class ExperimentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/primus-exp-XXXXXX";
    dir_ = mkdtemp(pattern);
    Write("train.py", "print('hi')\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << body;
    return path;
  }
  ExperimentRequest Request(const std::string& file, std::vector<std::string> overrides = {}) {
    ExperimentRequest request;
    request.file = file;
    request.overrides = std::move(overrides);
    request.environment = config::Environment({{"HOME", "/root"}});
    return request;
  }

 public:
  // For helpers outside the fixture.
  std::string WriteFile(const std::string& name, const std::string& body) { return Write(name, body); }
  ExperimentRequest MakeRequest(const std::string& file, std::vector<std::string> overrides = {}) {
    return Request(file, std::move(overrides));
  }
  std::string Torch() const { return "backend: torch\ntorch: {script: " + dir_ + "/train.py}\n"; }
  std::string dir_;
};

TEST_F(ExperimentTest, LoadsWithDefaultsAndExtendsChain) {
  Write("base.yaml", Torch() + "training: {steps: 50, lr: 0.001}\nparallelism: {micro_batch: 4}\n");
  std::string file = Write("exp.yaml", "extends: base.yaml\nexp_name: tiny\ntraining: {steps: 80}\n");
  auto experiment = LoadExperiment(Request(file));
  ASSERT_TRUE(experiment.ok()) << experiment.error().Format();
  EXPECT_EQ(experiment->exp_name, "tiny");
  EXPECT_EQ(experiment->workspace, "output");
  EXPECT_EQ(experiment->resolved.Find("training.steps")->AsInt(), 80);
  EXPECT_DOUBLE_EQ(experiment->resolved.Find("training.lr")->AsDouble(), 0.001);
  ASSERT_EQ(experiment->files.size(), 2u);
  EXPECT_NE(experiment->files[0].find("base.yaml"), std::string::npos);
}

TEST_F(ExperimentTest, UnknownKeySuggestsAndIsLocated) {
  std::string file = Write("exp.yaml", Torch() + "training:\n  stpes: 10\n");
  auto experiment = LoadExperiment(Request(file));
  ASSERT_FALSE(experiment.ok());
  EXPECT_EQ(experiment.error().code, ExitCode::kConfig);
  EXPECT_NE(experiment.error().message.find("exp.yaml:4:3"), std::string::npos) << experiment.error().message;
  EXPECT_NE(experiment.error().message.find("training.steps"), std::string::npos);
}

TEST_F(ExperimentTest, MissingScriptIsLocated) {
  std::string file = Write("exp.yaml", "backend: torch\ntorch:\n  script: nowhere/train.py\n");
  auto experiment = LoadExperiment(Request(file));
  ASSERT_FALSE(experiment.ok());
  EXPECT_NE(experiment.error().message.find("exp.yaml:3:11"), std::string::npos) << experiment.error().message;
  EXPECT_NE(experiment.error().message.find("does not exist"), std::string::npos);
}

TEST_F(ExperimentTest, UnknownBackendSuggests) {
  std::string file = Write("exp.yaml", "backend: megatorn\n");
  auto experiment = LoadExperiment(Request(file));
  ASSERT_FALSE(experiment.ok());
  EXPECT_NE(experiment.error().message.find("did you mean 'megatron'"), std::string::npos);
}

TEST_F(ExperimentTest, OverridesAreTypedAndChecked) {
  std::string file = Write("exp.yaml", Torch());
  auto experiment = LoadExperiment(Request(file, {"training.steps=7", "model.layers=4"}));
  ASSERT_TRUE(experiment.ok()) << experiment.error().Format();
  EXPECT_EQ(experiment->resolved.Find("training.steps")->AsInt(), 7);
  EXPECT_EQ(experiment->resolved.Find("model.layers")->AsInt(), 4);
  auto typo = LoadExperiment(Request(file, {"training.stepz=7"}));
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("did you mean 'training.steps'"), std::string::npos);
  auto wrong_type = LoadExperiment(Request(file, {"training.steps=many"}));
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.error().message.find("training.steps"), std::string::npos);
}

TEST_F(ExperimentTest, ModelParallelMustDivideWorldSize) {
  std::string file = Write("exp.yaml", Torch() + "parallelism:\n  tensor: 4\n  pipeline: 1\n");
  auto experiment = LoadExperiment(Request(file));
  ASSERT_TRUE(experiment.ok());
  EXPECT_TRUE(ResolveForWorldSize(Request(file), 8, &*experiment).ok());
  Status bad = ResolveForWorldSize(Request(file), 6, &*experiment);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("exp.yaml:4:11"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("does not divide the world size 6"), std::string::npos);
}

TEST_F(ExperimentTest, GlobalBatchArithmetic) {
  std::string file = Write("exp.yaml", Torch() + "parallelism: {micro_batch: 2, global_batch: 16}\n");
  auto experiment = LoadExperiment(Request(file));
  ASSERT_TRUE(experiment.ok());
  ASSERT_TRUE(ResolveForWorldSize(Request(file), 4, &*experiment).ok());
  EXPECT_EQ(experiment->grad_accum, 2) << "16 = 2 x 4 x 2";
  auto uneven = LoadExperiment(Request(file));
  Status bad = ResolveForWorldSize(Request(file), 3, &*uneven);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not a multiple of micro batch x data-parallel size = 2 x 3 = 6"), std::string::npos)
      << bad.error().message;
  std::string conflicting = Write("c.yaml", Torch() + "parallelism: {micro_batch: 2, global_batch: 16}\ntraining: {grad_accum: 4}\n");
  auto conflict = LoadExperiment(Request(conflicting));
  Status disagree = ResolveForWorldSize(Request(conflicting), 4, &*conflict);
  ASSERT_FALSE(disagree.ok());
  EXPECT_NE(disagree.error().message.find("grad_accum 4 disagrees"), std::string::npos);
}

TEST_F(ExperimentTest, VariantsPickSettingsByWorldSizeButOverridesWin) {
  std::string file = Write("exp.yaml", Torch() +
                                           "parallelism: {micro_batch: 8}\n"
                                           "variants:\n  16: {parallelism: {tensor: 2, micro_batch: 4}}\n");
  auto eight = LoadExperiment(Request(file));
  ASSERT_TRUE(ResolveForWorldSize(Request(file), 8, &*eight).ok());
  EXPECT_EQ(eight->parallelism.tensor, 1);
  auto sixteen = LoadExperiment(Request(file, {"parallelism.micro_batch=2"}));
  ASSERT_TRUE(ResolveForWorldSize(Request(file, {"parallelism.micro_batch=2"}), 16, &*sixteen).ok());
  EXPECT_EQ(sixteen->parallelism.tensor, 2);
  EXPECT_EQ(sixteen->parallelism.micro_batch, 2) << "command-line overrides win over the variant";
}

TEST_F(ExperimentTest, PrimusFormatFileIsLeftWholeForPrimus) {
  std::string file = Write("primus.yaml",
                           "work_group: amd\nuser_name: alice\nexp_name: llama_pretrain\nworkspace: ./out\n"
                           "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
                           "    model: llama3_8B.yaml\n    overrides:\n      micro_batch_size: 2\n      train_iters: 50\n"
                           "      stderr_sink_level: DEBUG\n");
  // key=value arguments are Primus's overrides: not applied to our schema (which would refuse them).
  auto experiment = LoadExperiment(Request(file, {"train_iters=5"}));
  ASSERT_TRUE(experiment.ok()) << experiment.error().Format();
  EXPECT_TRUE(experiment->primus_style);
  EXPECT_EQ(experiment->backend, "primus");
  EXPECT_EQ(experiment->exp_name, "llama_pretrain");
  EXPECT_EQ(experiment->workspace, "./out");
  // Nothing is translated into our keys: Primus reads the file as it is.
  EXPECT_EQ(experiment->resolved.Find("megatron.args")->AsMap().size(), 0u);
  EXPECT_EQ(experiment->primus_file.Find("modules.pre_trainer.overrides.stderr_sink_level")->AsString(), "DEBUG");
}

TEST_F(ExperimentTest, BackendPrimusIsOnlyForPrimusFormat) {
  std::string file = Write("ours.yaml", "backend: primus\n");
  auto experiment = LoadExperiment(Request(file));
  ASSERT_FALSE(experiment.ok());
  EXPECT_NE(experiment.error().message.find("backend 'primus' is how Primus-format experiments run"), std::string::npos);
}

TEST_F(ExperimentTest, MissingFileAndMissingFlag) {
  EXPECT_EQ(LoadExperiment(Request("")).error().code, ExitCode::kUsage);
  auto missing = LoadExperiment(Request(dir_ + "/nope.yaml"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope.yaml does not exist"), std::string::npos);
}


// The error of loading and resolving `body` for 8 workers, without the file's directory.
std::string ExperimentError(ExperimentTest* test, const std::string& body) {
  std::string file = test->WriteFile("exp.yaml", body);
  auto request = test->MakeRequest(file);
  auto experiment = LoadExperiment(request);
  Status status = experiment.ok() ? ResolveForWorldSize(request, 8, &*experiment) : experiment.status();
  if (status.ok()) return "valid";
  EXPECT_EQ(status.error().code, ExitCode::kConfig) << status.error().message;
  std::string message = status.error().message;
  if (message.starts_with(file)) message = "exp.yaml" + message.substr(file.size());
  return message;
}

TEST_F(ExperimentTest, HugeParallelSizesAreRangeErrorsNotCrashes) {
  // tensor 2^62 x pipeline 4 overflowed to 0 and divided by it (SIGFPE).
  EXPECT_EQ(ExperimentError(this, Torch() + "parallelism: {tensor: 4611686018427387904, pipeline: 4}\n"),
            "exp.yaml:3:23: parallelism.tensor: 4611686018427387904 is out of range; expected from 1 to 1048576");
  EXPECT_EQ(ExperimentError(this, Torch() + "parallelism: {micro_batch: 4611686018427387904}\n"),
            "exp.yaml:3:28: parallelism.micro_batch: 4611686018427387904 is out of range; expected from 1 to 1048576");
  EXPECT_EQ(ExperimentError(this, Torch() + "parallelism: {tensor: 0}\n"),
            "exp.yaml:3:23: parallelism.tensor: 0 is out of range; expected from 1 to 1048576");
  // The largest sizes multiply without overflow: a plain "does not divide".
  EXPECT_NE(ExperimentError(this, Torch() + "parallelism: {tensor: 1048576, pipeline: 1048576, context: 1048576}\n")
                .find("= 1152921504606846976 does not divide the world size 8"),
            std::string::npos);
  EXPECT_NE(ExperimentError(this, Torch() + "parallelism: {micro_batch: 1048576}\ntraining: {grad_accum: 1048576}\n")
                .find("is above 1073741824"),
            std::string::npos);
}

TEST_F(ExperimentTest, NegativeNodeCountsAreRefused) {
  EXPECT_EQ(ExperimentError(this, Torch() + "distributed:\n  nnodes: -3\n"),
            "exp.yaml:4:11: distributed.nnodes: -3 is out of range; expected from 0 to 262144");
  EXPECT_EQ(ExperimentError(this, Torch() + "distributed: {nproc_per_node: \"4611686018427387904\"}\n"),
            "exp.yaml:3:31: distributed.nproc_per_node must be auto, gpu, cpu or a number from 1 to 4096, not "
            "'4611686018427387904'");
}

TEST_F(ExperimentTest, AQuotedDottedKeyIsRefusedNotIgnored) {
  EXPECT_EQ(ExperimentError(this, Torch() + "\"training.steps\": 3\n"),
            "exp.yaml:3:1: the key 'training.steps' contains a dot; a key in a file names one level, so "
            "'training.steps' is no setting");
}

TEST_F(ExperimentTest, ExpNameIsASafeDirectoryName) {
  const std::pair<std::string, std::string> cases[] = {
      {"exp_name: ../../etc\n", "exp.yaml:3:11: exp_name '../../etc' starts with '.'; it names a directory"},
      {"exp_name: a/b\n", "exp.yaml:3:11: exp_name 'a/b' contains '/'; it names a directory"},
      {"exp_name: \"a\\nb\"\n", "exp.yaml:3:11: exp_name 'a?b' contains the byte 0x0a; it names a directory"},
      {"exp_name: \"red\\e[31m\"\n", "exp.yaml:3:11: exp_name 'red?[31m' contains the byte 0x1b; it names a directory"},
      {"exp_name: " + std::string(129, 'x') + "\n",
       "exp.yaml:3:11: exp_name '" + std::string(40, 'x') + "...' is 129 characters long (at most 128); it names a "
       "directory"},
  };
  for (const auto& [line, expected] : cases) EXPECT_EQ(ExperimentError(this, Torch() + line), expected) << line;
  EXPECT_EQ(ExperimentError(this, Torch() + "exp_name: gpt2-124m_v1.2\n"), "valid");
  // From an override, the flag is named.
  std::string file = WriteFile("exp.yaml", Torch());
  auto experiment = LoadExperiment(MakeRequest(file, {"exp_name=x y"}));
  ASSERT_FALSE(experiment.ok());
  EXPECT_EQ(experiment.error().message, "flag exp_name=x y: exp_name 'x y' contains ' '; it names a directory");
  EXPECT_EQ(experiment.error().hint,
            "use letters, digits, '.', '_' and '-' (not first: '.' or '-'), at most 128 characters");
  // A name taken from the file name is made safe instead.
  auto from_file = LoadExperiment(MakeRequest(WriteFile("my exp.v2.yaml", Torch())));
  ASSERT_TRUE(from_file.ok()) << from_file.error().Format();
  EXPECT_EQ(from_file->exp_name, "my_exp.v2");
}

}  // namespace
}  // namespace primus::train
