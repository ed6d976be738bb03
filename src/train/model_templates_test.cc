#include "train/model_templates.h"

#include <gtest/gtest.h>

namespace primus::train {
namespace {

Result<RenderedTemplate> Render(const std::string& model, const std::string& backend, int gpus, int nodes = 1) {
  return RenderTemplate({model, backend, gpus, nodes, "/opt/primus/examples/gpt/train.py"});
}

TEST(ModelTemplatesTest, EveryModelHasTheThreeNamedAndTheBackendsItLists) {
  std::vector<std::string> names;
  for (const ModelTemplate& model : ModelTemplates()) {
    names.push_back(model.name);
    for (const std::string& backend : model.backends) {
      auto rendered = Render(model.name, backend, 8, 2);
      ASSERT_TRUE(rendered.ok()) << model.name << " " << backend << ": " << rendered.error().message;
      EXPECT_NE(rendered->yaml.find("backend: " + backend + "\n"), std::string::npos) << rendered->yaml;
      EXPECT_NE(rendered->yaml.find("distributed: {nproc_per_node: 8, nnodes: 2}"), std::string::npos);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gpt2-124m", "llama3-8b", "deepseek-v2-lite", "mixtral-8x7b", "qwen3-8b"}));
}

TEST(ModelTemplatesTest, TheLayoutFitsTheGpusGiven) {
  auto llama = Render("llama3-8b", "megatron", 8, 2);
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(llama->layout.tensor, 2);
  EXPECT_EQ(llama->layout.data_parallel, 8);
  EXPECT_EQ(llama->layout.global_batch, 128);
  EXPECT_EQ(llama->summary,
            "Llama-3-8B on Megatron-LM, 2 node(s) x 8 GPU(s): TP 2 PP 1 EP 1 DP 8, global batch 128 x 8192 tokens");
  // One GPU: no tensor parallelism and no sequence parallelism to go with it.
  auto one = Render("llama3-8b", "megatron", 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->layout.tensor, 1);
  EXPECT_EQ(one->yaml.find("sequence_parallel"), std::string::npos);
  // Experts: the expert parallel size divides both the data-parallel size and the experts.
  auto deepseek = Render("deepseek-v2-lite", "megatron", 6);
  ASSERT_TRUE(deepseek.ok());
  EXPECT_EQ(deepseek->layout.expert, 2) << "6 ranks and 64 experts share 2";
  EXPECT_EQ(deepseek->layout.global_batch % (deepseek->layout.micro_batch * deepseek->layout.data_parallel), 0);
  // More ranks than the batch wanted: the batch grows to one sequence per rank.
  auto big = Render("gpt2-124m", "megatron", 8, 8);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->layout.global_batch, 16 * 64);
}

TEST(ModelTemplatesTest, WithoutGpusTheExampleTrainerRunsOnTheCpu) {
  auto cpu = Render("qwen3-8b", "", 0);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  EXPECT_EQ(cpu->backend, "torch");
  EXPECT_NE(cpu->yaml.find("device: cpu"), std::string::npos) << cpu->yaml;
  EXPECT_NE(cpu->yaml.find("torch: {script: \"/opt/primus/examples/gpt/train.py\"}"), std::string::npos);
  EXPECT_NE(cpu->yaml.find("--gpus 0"), std::string::npos) << "run again, it writes the same";
  EXPECT_NE(cpu->yaml.find("a stand-in for Qwen3-8B"), std::string::npos);
  auto megatron = Render("qwen3-8b", "megatron", 0);
  ASSERT_FALSE(megatron.ok());
  EXPECT_NE(megatron.error().hint.find("--gpus 8"), std::string::npos);
}

TEST(ModelTemplatesTest, AModelIsFoundByTheWayPeopleWriteIt) {
  for (const char* name : {"deepseek_v2", "DeepSeek-V2-Lite", "qwen3", "Qwen3", "mixtral", "llama3"}) {
    auto rendered = Render(name, "megatron", 8);
    ASSERT_TRUE(rendered.ok()) << name << ": " << rendered.error().message;
  }
  EXPECT_EQ(Render("qwen3", "megatron", 8)->model, "qwen3-8b");
  EXPECT_EQ(Render("deepseek_v2", "megatron", 8)->exp_name, "deepseek-v2-lite-megatron");
  EXPECT_FALSE(Render("l", "megatron", 8).ok()) << "too short to mean one";
}

TEST(ModelTemplatesTest, WhatHasNoTemplateIsNamedWithWhatHas) {
  auto typo = Render("lama3-8b", "", 8);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("did you mean 'llama3-8b'"), std::string::npos) << typo.error().message;
  auto titan = Render("mixtral-8x7b", "torchtitan", 8);
  ASSERT_FALSE(titan.ok());
  EXPECT_EQ(titan.error().message, "init: Mixtral-8x7B has no torchtitan template (TorchTitan v0.2.2 has no such model)");
  EXPECT_EQ(titan.error().hint, "--backend megatron, torch for mixtral-8x7b");
  auto unknown = Render("gpt2-124m", "megatrn", 8);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("did you mean 'megatron'"), std::string::npos);
}

}  // namespace
}  // namespace primus::train
