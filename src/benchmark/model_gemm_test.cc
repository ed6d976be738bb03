#include "benchmark/model_gemm.h"

#include <gtest/gtest.h>

#include "benchmark/gemm_request.h"

namespace primus::benchmark {
namespace {

std::vector<std::string> Described(const ModelGemmRequest& request) {
  std::vector<std::string> out;
  auto layers = ModelLayers(request);
  EXPECT_TRUE(layers.ok()) << layers.error().Format();
  if (!layers.ok()) return out;
  for (const LinearLayer& layer : *layers) {
    for (const GemmShape& shape : PhaseShapes(layer)) out.push_back(shape.Describe());
  }
  return out;
}

TEST(ModelGemmTest, DenseLlamaShapes) {
  auto request = ParseModelGemmRequest(ModelFamily::kDense, {"--model", "llama3.1_8b", "--iters", "2"});
  ASSERT_TRUE(request.ok()) << request.error().Format();
  EXPECT_EQ(request->model, "Llama3.1_8B");
  std::vector<std::string> shapes = Described(*request);
  ASSERT_EQ(shapes.size(), 15u);
  // 8192 tokens; q 32 + k 8 + v 8 heads of 128 = 6144 outputs.
  EXPECT_EQ(shapes[0], "attn_qkv.fwd 6144x8192x4096 TN");
  EXPECT_EQ(shapes[1], "attn_qkv.wgrad 4096x6144x8192 NT");
  EXPECT_EQ(shapes[2], "attn_qkv.dgrad 4096x8192x6144 NN");
  EXPECT_EQ(shapes[6], "mlp_up.fwd 28672x8192x4096 TN");
  EXPECT_EQ(shapes[9], "mlp_down.fwd 4096x8192x14336 TN");
  EXPECT_EQ(shapes[12], "vocab.fwd 128256x8192x4096 TN");
  EXPECT_EQ(request->gemm_args, (std::vector<std::string>{"--iters", "2"})) << "no default duration with --iters";
}

TEST(ModelGemmTest, FlagsOverrideThePresetAndDurationDefaultsToThreeSeconds) {
  auto request = ParseModelGemmRequest(ModelFamily::kDense, {"--seqlen", "128", "--model", "Llama2_7B", "--mbs", "2",
                                                             "--dtype", "fp16", "--output-file", "d.md"});
  ASSERT_TRUE(request.ok()) << request.error().Format();
  auto layers = ModelLayers(*request);
  ASSERT_TRUE(layers.ok());
  EXPECT_EQ((*layers)[0].tokens, 256) << "mbs x the --seqlen given, not the preset's 4096";
  EXPECT_EQ((*layers)[0].out, (32 + 2 * 32) * 128);
  auto args = ModelGemmArgs(*request);
  ASSERT_TRUE(args.ok());
  ASSERT_EQ(args->size(), 15u * 2 + 6);
  EXPECT_EQ((*args)[0], "--shape");
  EXPECT_EQ((*args)[1], "attn_qkv.fwd=12288x256x4096:TN");
  EXPECT_EQ(std::vector<std::string>(args->end() - 6, args->end()),
            (std::vector<std::string>{"--dtype", "fp16", "--output", "d.md", "--duration", "3"}));
  auto gemm = ParseGemmRequest(*args);
  ASSERT_TRUE(gemm.ok()) << "benchmark gemm takes them: " << gemm.error().Format();
  EXPECT_EQ(gemm->shapes.size(), 15u);
}

TEST(ModelGemmTest, DeepseekShapes) {
  auto request = ParseModelGemmRequest(ModelFamily::kDeepseek, {"--model", "Deepseek_V3"});
  ASSERT_TRUE(request.ok()) << request.error().Format();
  auto layers = ModelLayers(*request);
  ASSERT_TRUE(layers.ok());
  std::vector<std::string> names;
  for (const LinearLayer& layer : *layers) names.push_back(layer.name);
  EXPECT_EQ(names, (std::vector<std::string>{"attn_q_down", "attn_q_up", "attn_kv_down", "attn_kv_up", "attn_out", "router",
                                             "shared_gateup", "shared_down", "moe_gateup", "moe_down", "vocab"}));
  const LinearLayer& q_up = (*layers)[1];
  EXPECT_EQ(q_up.in, 1536);
  EXPECT_EQ(q_up.out, 128 * (128 + 64));
  EXPECT_EQ((*layers)[2].out, 512 + 64) << "kv_lora_rank + rope";
  EXPECT_EQ((*layers)[3].out, 128 * (128 + 128));
  EXPECT_EQ((*layers)[8].tokens, 4096 * 8 / 256) << "tokens per routed expert";
  EXPECT_EQ((*layers)[8].out, 2 * 2048);

  auto lite = ParseModelGemmRequest(ModelFamily::kDeepseek, {"--model", "Deepseek_V2_Lite", "--n-shared-experts", "0"});
  ASSERT_TRUE(lite.ok());
  auto lite_layers = ModelLayers(*lite);
  ASSERT_TRUE(lite_layers.ok());
  EXPECT_EQ((*lite_layers)[0].name, "attn_q") << "no q_lora_rank";
  for (const LinearLayer& layer : *lite_layers) EXPECT_FALSE(layer.name.starts_with("shared_"));
}

TEST(ModelGemmTest, ErrorsNameTheFlags) {
  auto model = ParseModelGemmRequest(ModelFamily::kDense, {"--model", "Llama3_8B"});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ExitCode::kUsage);
  EXPECT_NE(model.error().message.find("unknown --model 'Llama3_8B'"), std::string::npos);
  EXPECT_NE(model.error().hint.find("Llama3.1_8B"), std::string::npos);
  EXPECT_FALSE(ParseModelGemmRequest(ModelFamily::kDense, {"--hidden-size", "0"}).ok());
  EXPECT_FALSE(ParseModelGemmRequest(ModelFamily::kDense, {"--kv-lora-rank", "8"}).ok()) << "a deepseek flag";
  auto few = ParseModelGemmRequest(ModelFamily::kDeepseek, {"--seqlen", "16"});
  ASSERT_TRUE(few.ok());
  auto layers = ModelLayers(*few);
  ASSERT_FALSE(layers.ok());
  EXPECT_NE(layers.error().message.find("leaves no token for an expert"), std::string::npos);
}

}  // namespace
}  // namespace primus::benchmark
