#include "train/experiment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "util/strings.h"

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
    request.environment = Environment({{"HOME", "/root"}});
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
  const config::Value* megatron_args = experiment->resolved.Find("megatron.args");
  EXPECT_TRUE(megatron_args == nullptr || megatron_args->IsNull() || (megatron_args->IsMap() && megatron_args->AsMap().empty()));
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
  // As the launcher reads --nproc-per-node: any case, spaces around.
  EXPECT_EQ(ExperimentError(this, Torch() + "distributed: {nproc_per_node: AUTO}\n"), "valid");
  EXPECT_EQ(ExperimentError(this, Torch() + "distributed: {nproc_per_node: \" 8 \"}\n"), "valid");
  EXPECT_EQ(ExperimentError(this, Torch() + "distributed: {nproc_per_node: \"0\"}\n"),
            "exp.yaml:3:31: distributed.nproc_per_node must be auto, gpu, cpu or a number from 1 to 4096, not '0'");
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


// The error of loading and resolving `body` for `world_size` workers with these overrides.
std::string ResolveError(ExperimentTest* test, const std::string& body, int world_size,
                         std::vector<std::string> overrides = {}) {
  std::string file = test->WriteFile("exp.yaml", body);
  auto request = test->MakeRequest(file, std::move(overrides));
  auto experiment = LoadExperiment(request);
  Status status = experiment.ok() ? ResolveForWorldSize(request, world_size, &*experiment) : experiment.status();
  if (status.ok()) return "valid";
  EXPECT_EQ(status.error().code, ExitCode::kConfig) << status.error().message;
  std::string message = ReplaceAll(status.error().message, file, "exp.yaml");
  return message + (status.error().hint.empty() ? "" : " | " + status.error().hint);
}

const char kMegatron[] = "backend: megatron\nmegatron:\n  path: /opt/Megatron-LM\n";

TEST_F(ExperimentTest, MegatronKeysAreCheckedAtLoadWithTheirLocation) {
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "model:\n  num_layers: 2\n  hiden_size: 64\n", 8),
            "exp.yaml:6:3: model.hiden_size is not a Megatron-LM core_v0.19.0 option (did you mean 'hidden_size'?) | "
            "keys are the dests of megatron/training/arguments.py (num_layers for --num-layers); "
            "an option of a fork or of another release: set megatron.release, or pass it as written in "
            "megatron.verbatim_args: [--its-flag]");
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "  args:\n    tokenizer_model: \"\"\n", 8),
            "exp.yaml:5:22: megatron.args.tokenizer_model: --tokenizer-model has an empty value | give a value, or null "
            "to leave --tokenizer-model out");
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "  args:\n    tensor_model_parallel_size: 8\n", 8),
            "exp.yaml:5:5: megatron.args.tensor_model_parallel_size is set by primus-cli from parallelism.tensor | "
            "use parallelism.tensor (it is part of the layout check)")
      << "the layout check cannot be bypassed";
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "model:\n  global_batch_size: 8\n", 8),
            "exp.yaml:5:3: model.global_batch_size is set by primus-cli from parallelism.global_batch | use "
            "parallelism.global_batch (it is part of the layout check)");
  EXPECT_NE(ResolveError(this, std::string(kMegatron) + "  args:\n    stderr_sink_level: INFO\n", 8)
                .find("exp.yaml:5:5: megatron.args.stderr_sink_level is a Primus setting"),
            std::string::npos);
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "  args:\n    data_path: [/a, /b]\n    seq_length: null\n"
                                                        "model:\n  num_layers: 2\n  attention_dropout: 0.0\n", 8),
            "exp.yaml:6:5: megatron.args.seq_length is set by primus-cli from training.seq_len | use training.seq_len "
            "(it is part of the layout check)")
      << "null is no way around it either";
  // Overrides and variants go through the same rules.
  EXPECT_EQ(ResolveError(this, kMegatron, 8, {"megatron.args.num_layerz=3"}),
            "flag megatron.args.num_layerz=3: megatron.args.num_layerz is not a Megatron-LM core_v0.19.0 option (did you "
            "mean 'num_layers'?) | keys are the dests of megatron/training/arguments.py (num_layers for --num-layers); "
            "an option of a fork or of another release: set megatron.release, or pass it as written in "
            "megatron.verbatim_args: [--its-flag]");
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "variants:\n  8: {megatron: {args: {num_layers: []}}}\n", 8),
            "exp.yaml:5:37: megatron.args.num_layers: --num-layers takes one value, not a list");
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "model:\n  num_layers: 2\n  gradient_accumulation_fusion: false\n",
                         8, {"megatron.args.use_flash_attn=true"}),
            "valid");
}

TEST_F(ExperimentTest, TorchTitanKeysAreCheckedAtLoad) {
  const std::string titan = "backend: torchtitan\nmodel: {name: llama3, flavor: debugmodel}\n";
  EXPECT_EQ(ResolveError(this, titan + "torchtitan:\n  toml:\n    training: {local_batch_size: 4}\n", 8),
            "exp.yaml:5:16: torchtitan.toml.training.local_batch_size is written by primus-cli from the experiment's own "
            "keys | use parallelism.micro_batch");
  EXPECT_NE(ResolveError(this, titan + "torchtitan:\n  toml:\n    compile: {enabel: true}\n", 8)
                .find("exp.yaml:5:15: torchtitan.toml.compile.enabel is not a TorchTitan v0.2.2 setting (did you mean "
                      "'torchtitan.toml.compile.enable'?)"),
            std::string::npos);
  EXPECT_NE(ResolveError(this, "backend: torchtitan\nmodel: {name: llama3_8B.yaml}\n", 8)
                .find("exp.yaml:2:15: model.name 'llama3_8B.yaml' is a file"),
            std::string::npos);
  EXPECT_EQ(ResolveError(this, titan + "training: {dtype: fp16}\n", 8),
            "exp.yaml:3:19: training.dtype fp16: TorchTitan trains in bf16 or fp32 | write training.dtype: bf16");
  EXPECT_EQ(ResolveError(this, titan, 8, {"torchtitan.toml.training.dataset=c4"}), "valid");
}

TEST_F(ExperimentTest, TheLayoutCheckReadsTheValuesAfterEveryOverride) {
  // TP 3 on 8 workers, from the command line: refused, naming the flag.
  EXPECT_EQ(ResolveError(this, Torch(), 8, {"parallelism.tensor=3"}),
            "flag parallelism.tensor=3: tensor x pipeline x context = 3 x 1 x 1 = 3 does not divide the world size 8 "
            "(parallelism.tensor 3 (flag parallelism.tensor=3), parallelism.pipeline 1 (default), parallelism.context 1 "
            "(default)) | choose parallel sizes whose product divides nnodes x nproc_per_node, or add a 'variants:' "
            "entry for 8 workers");
  // From the variant for this world size.
  EXPECT_EQ(ResolveError(this, Torch() + "variants:\n  8: {parallelism: {pipeline: 3}}\n", 8),
            "exp.yaml:4:31: tensor x pipeline x context = 1 x 3 x 1 = 3 does not divide the world size 8 "
            "(parallelism.tensor 1 (default), parallelism.pipeline 3 (exp.yaml:4:31), parallelism.context 1 (default)) | "
            "choose parallel sizes whose product divides nnodes x nproc_per_node, or add a 'variants:' entry for 8 "
            "workers");
  // EP 8 on one worker.
  EXPECT_EQ(ResolveError(this, Torch(), 1, {"parallelism.expert=8"}),
            "flag parallelism.expert=8: expert-parallel size 8 does not divide the data-parallel size 1 = world size 1 / "
            "(tensor x pipeline x context 1) | choose parallelism.expert dividing 1, or add a 'variants:' entry for 1 "
            "workers");
  // EP must divide the experts.
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "model:\n  num_experts: 6\nparallelism: {expert: 4}\n", 8),
            "exp.yaml:6:23: expert-parallel size 4 does not divide the 6 experts (parallelism.expert 4 "
            "(exp.yaml:6:23), model.num_experts 6 (exp.yaml:5:16)) | choose parallelism.expert dividing model.num_experts");
  EXPECT_EQ(ResolveError(this, std::string(kMegatron) + "model:\n  num_experts: 8\n", 8, {"parallelism.expert=4"}), "valid");
  // The global batch with an override.
  EXPECT_EQ(ResolveError(this, Torch() + "parallelism: {global_batch: 64}\n", 8, {"parallelism.micro_batch=3"}),
            "exp.yaml:3:29: global batch 64 is not a multiple of micro batch x data-parallel size = 3 x 8 = 24 "
            "(parallelism.global_batch 64 (exp.yaml:3:29), parallelism.micro_batch 3 (flag parallelism.micro_batch=3)) | "
            "global_batch = micro_batch x data-parallel size x grad_accum");
}

}  // namespace
}  // namespace primus::train
