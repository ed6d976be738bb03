#include "train/primus_experiment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "config/yaml_loader.h"

namespace primus::train {
namespace {

// A Primus installation with one module file (extending a base) and one model.
class PrimusExperimentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/primus-exp-XXXXXX";
    dir_ = mkdtemp(pattern);
    install_ = {dir_ + "/Primus", "PRIMUS_PATH", "26.5"};
    Write("Primus/primus/configs/modules/megatron/trainer_base.yaml",
          "tensor_model_parallel_size: 1\npipeline_model_parallel_size: 1\nmicro_batch_size: 1\n"
          "global_batch_size: null\nexpert_model_parallel_size: 1\n");
    Write("Primus/primus/configs/modules/megatron/pre_trainer.yaml", "extends: [trainer_base.yaml]\ntrain_iters: 10\n");
    Write("Primus/primus/configs/models/megatron/moe_8x.yaml", "num_layers: 4\nnum_experts: 8\n");
    Write("Primus/primus/configs/modules/torchtitan/pre_trainer.yaml",
          "parallelism:\n  tensor_parallel_degree: 1\ntraining:\n  local_batch_size: 1\n  global_batch_size: -1\n");
    Write("Primus/primus/configs/models/torchtitan/llama3_8B.yaml", "model:\n  name: llama3\n  flavor: 8B\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << body;
    return path;
  }
  Result<PrimusExperiment> Read(const std::string& body, const std::vector<std::string>& args = {},
                                const std::string& subtask = "pretrain") {
    auto file = config::LoadYamlFile(Write("exp.yaml", body), Environment{});
    if (!file.ok()) return file.error();
    return ReadPrimusExperiment(*file, subtask, install_, args, Environment{});
  }
  std::string dir_;
  PrimusInstall install_;
};

constexpr const char* kMegatron =
    "work_group: amd\nuser_name: me\nexp_name: moe\nworkspace: ./output\n"
    "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n    model: moe_8x.yaml\n"
    "    overrides:\n      micro_batch_size: 2\n      global_batch_size: 64\n      tensor_model_parallel_size: 2\n";

TEST_F(PrimusExperimentTest, ModuleModelOverridesAndCommandLineInPrimusOrder) {
  auto experiment = Read(kMegatron, {"--micro_batch_size", "4", "pipeline_model_parallel_size=2", "--data_path", "/d"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().message;
  EXPECT_EQ(experiment->module_name, "pre_trainer");
  EXPECT_EQ(experiment->framework, "megatron");
  const config::Value& p = experiment->params;
  EXPECT_EQ(p.Find("train_iters")->AsInt(), 10);           // module file
  EXPECT_EQ(p.Find("num_experts")->AsInt(), 8);            // model file
  EXPECT_EQ(p.Find("tensor_model_parallel_size")->AsInt(), 2);  // experiment's overrides
  EXPECT_EQ(p.Find("micro_batch_size")->AsInt(), 4);       // command line, last
  EXPECT_EQ(p.Find("pipeline_model_parallel_size")->AsInt(), 2);
  EXPECT_EQ(p.Find("data_path"), nullptr);                 // Primus's own option, not an override
  EXPECT_EQ(experiment->args.size(), 5u);                  // verbatim for Primus

  auto layout = CheckPrimusLayout(*experiment, 8);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  EXPECT_EQ(layout->data_parallel, 2);
  EXPECT_EQ(layout->global_batch, 64);
  EXPECT_EQ(layout->grad_accum, 8);
  EXPECT_NE(DescribePrimusPlan(*experiment, *layout, 8).find("TP 2 PP 2 CP 1 EP 1, DP 2, global batch 64 = 4 x 2 x 8"),
            std::string::npos);
}

TEST_F(PrimusExperimentTest, LayoutViolationsNameTheKeysAndWhereTheyCameFrom) {
  auto experiment = Read(kMegatron, {"--tensor_model_parallel_size", "3"});
  ASSERT_TRUE(experiment.ok());
  auto layout = CheckPrimusLayout(*experiment, 8);
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.error().code, ExitCode::kConfig);
  EXPECT_NE(layout.error().message.find("tensor_model_parallel_size 3 (flag --tensor_model_parallel_size 3)"), std::string::npos)
      << layout.error().message;
  EXPECT_NE(layout.error().message.find("does not divide the world size 8"), std::string::npos);

  experiment = Read(kMegatron, {"expert_model_parallel_size=8", "tensor_model_parallel_size=1"});
  ASSERT_TRUE(experiment.ok());
  layout = CheckPrimusLayout(*experiment, 1);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.error().message.find("expert_model_parallel_size 8 (flag expert_model_parallel_size=8) does not divide"),
            std::string::npos)
      << layout.error().message;

  experiment = Read(kMegatron, {"expert_model_parallel_size=3", "tensor_model_parallel_size=1", "global_batch_size=None"});
  ASSERT_TRUE(experiment.ok());
  layout = CheckPrimusLayout(*experiment, 6);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.error().message.find("does not divide the expert count, num_experts 8"), std::string::npos)
      << layout.error().message;

  experiment = Read(kMegatron);
  ASSERT_TRUE(experiment.ok());
  layout = CheckPrimusLayout(*experiment, 6);  // DP 3: 64 is not a multiple of 2 x 3
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.error().message.find("global_batch_size 64 (" + dir_ + "/exp.yaml:"), std::string::npos)
      << layout.error().message;
}

TEST_F(PrimusExperimentTest, TorchTitanKeysAreNested) {
  auto experiment = Read(
      "exp_name: t\nmodules:\n  pre_trainer:\n    framework: torchtitan\n    config: pre_trainer.yaml\n"
      "    model: llama3_8B.yaml\n",
      {"--parallelism.tensor_parallel_degree", "2", "training.local_batch_size=3"});
  ASSERT_TRUE(experiment.ok()) << experiment.error().message;
  auto layout = CheckPrimusLayout(*experiment, 8);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  EXPECT_EQ(layout->tensor, 2);
  EXPECT_EQ(layout->global_batch, 12);  // -1: local x DP
}

TEST_F(PrimusExperimentTest, PosttrainRunsPostTrainerAndEitherStandsInForTheOther) {
  auto experiment = Read(kMegatron, {}, "posttrain");
  ASSERT_TRUE(experiment.ok());
  EXPECT_EQ(experiment->module_name, "pre_trainer");
  experiment = Read("exp_name: x\nmodules:\n  evaluator:\n    framework: megatron\n", {}, "posttrain");
  ASSERT_FALSE(experiment.ok());
  EXPECT_NE(experiment.error().message.find("runs the module 'post_trainer', and this experiment has evaluator"),
            std::string::npos);
}

TEST_F(PrimusExperimentTest, AMissingModelOrModuleFileIsLocatedAndNamed) {
  auto experiment = Read(
      "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n    model: llama9_1T.yaml\n");
  ASSERT_FALSE(experiment.ok());
  EXPECT_EQ(experiment.error().code, ExitCode::kConfig);
  EXPECT_NE(experiment.error().message.find("exp.yaml:5:12: Primus has no model 'llama9_1T.yaml' for megatron"),
            std::string::npos)
      << experiment.error().message;
  experiment = Read("modules:\n  pre_trainer:\n    framework: megatron\n    config: ../../../etc/passwd\n    model: moe_8x\n");
  ASSERT_FALSE(experiment.ok());
  EXPECT_NE(experiment.error().message.find("leaves Primus's modules directory"), std::string::npos);
}

TEST_F(PrimusExperimentTest, OtherFrameworksAreLeftToPrimus) {
  auto experiment = Read("modules:\n  pre_trainer:\n    framework: maxtext\n    overrides: {ici_fsdp_parallelism: 3}\n");
  ASSERT_TRUE(experiment.ok()) << experiment.error().message;
  auto layout = CheckPrimusLayout(*experiment, 8);
  ASSERT_TRUE(layout.ok());
  EXPECT_FALSE(layout->known);
  EXPECT_NE(DescribePrimusPlan(*experiment, *layout, 8).find("layout: Primus checks it for maxtext"), std::string::npos);
}

TEST(PrimusOverridesTest, PrimusSyntaxAndTypes) {
  config::Value tree = ParsePrimusOverrides(
      {"lr=0.001", "--train_iters", "10", "model.layers=24", "--use_flash", "--name=x", "--load", "None", "--a", "--b", "False",
       "--c", "k=v"});
  EXPECT_DOUBLE_EQ(tree.Find("lr")->AsDouble(), 0.001);
  EXPECT_EQ(tree.Find("train_iters")->AsInt(), 10);
  EXPECT_TRUE(tree.Find("use_flash")->AsBool());
  EXPECT_EQ(tree.Find("model.layers")->AsInt(), 24);
  EXPECT_EQ(tree.Find("name")->AsString(), "x");
  EXPECT_TRUE(tree.Find("load")->IsNull());
  EXPECT_TRUE(tree.Find("a")->AsBool());
  EXPECT_FALSE(tree.Find("b")->AsBool());
  // As in Primus: a value that does not start with "--" belongs to the flag before it.
  EXPECT_EQ(tree.Find("c")->AsString(), "k=v");
}

}  // namespace
}  // namespace primus::train
