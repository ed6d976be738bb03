// `benchmark gemm-dense` and `benchmark gemm-deepseek`: the GEMMs one
// transformer layer of a model runs, with the shapes Primus's benchmarks of
// the same names derive from the model's dimensions, run through `benchmark
// gemm` (every local GPU, or OpenBLAS on the CPU).
//
// Each linear layer multiplies T = mbs x seqlen tokens by an IN x OUT
// weight; it is measured three times, as training runs it:
//   fwd    Y  = X W^T   M=OUT N=T   K=IN   TN
//   wgrad  dW = dY^T X  M=IN  N=OUT K=T    NT
//   dgrad  dX = dY W    M=IN  N=T   K=OUT  NN
// (BLAS column-major, as `benchmark gemm --shape` and hipblaslt-bench write
// problems; the FLOPs are Primus's 2*T*IN*OUT for each).
//
// Dense layers (Llama-style): attn_qkv (IN hidden, OUT (heads + 2 kv_heads)
// x head_dim), attn_out (hidden -> hidden), mlp_up (hidden -> 2 x
// intermediate: gate and up), mlp_down (intermediate -> hidden), vocab
// (hidden -> vocab).
// DeepSeek layers (MLA + MoE): attn_q (or attn_q_down/attn_q_up with a
// q_lora_rank), attn_kv_down, attn_kv_up, attn_out, router, shared_gateup and
// shared_down (when there are shared experts), moe_gateup and moe_down over
// the tokens one routed expert gets on average (T x experts_per_tok /
// routed_experts), vocab.
//
// --model NAME takes a preset's dimensions (Primus's table, any case); any
// dimension flag given besides overrides the preset's value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/gemm_problem.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::benchmark {

enum class ModelFamily { kDense, kDeepseek };

struct ModelDims {
  int64_t seqlen = 0, hidden = 0, intermediate = 0, heads = 0, vocab = 0;
  // dense
  int64_t kv_heads = 0, head_dim = 0;
  // deepseek
  int64_t kv_lora_rank = 0, moe_intermediate = 0, experts_per_tok = 0, routed_experts = 0, shared_experts = 0;
  int64_t q_lora_rank = 0;  // 0: none (attn_q)
  int64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};

struct ModelGemmRequest {
  ModelFamily family = ModelFamily::kDense;
  std::string model;  // the preset's name as Primus spells it, or "" (custom)
  ModelDims dims;
  int64_t mbs = 1;
  // What goes on to `benchmark gemm` (--dtype, --duration or --iters,
  // --warmup, --device, --output, --output-file, --append, --tune).
  std::vector<std::string> gemm_args;
};

const std::vector<OptionSpec>& ModelGemmOptions(ModelFamily family);
// args: after "gemm-dense" / "gemm-deepseek". Without --duration or --iters
// each shape runs for 3 seconds, as in Primus.
Result<ModelGemmRequest> ParseModelGemmRequest(ModelFamily family, const std::vector<std::string>& args);
std::vector<std::string> ModelPresetNames(ModelFamily family);

struct LinearLayer {
  std::string name;  // "attn_qkv"
  int64_t tokens = 0, in = 0, out = 0;
};
// Errors (a usage error naming the flags) when a layer has no rows, e.g. too
// few tokens for one per routed expert.
Result<std::vector<LinearLayer>> ModelLayers(const ModelGemmRequest& request);
// fwd, wgrad and dgrad of one layer, named "<layer>.<phase>".
std::vector<GemmShape> PhaseShapes(const LinearLayer& layer);

// The whole `benchmark gemm` argument list: a --shape per phase of every
// layer, then gemm_args.
Result<std::vector<std::string>> ModelGemmArgs(const ModelGemmRequest& request);
// "gemm-dense Llama3.1_8B", and the settings lines of the report.
std::string ModelGemmTitle(const ModelGemmRequest& request);
std::vector<std::string> ModelGemmSettings(const ModelGemmRequest& request);

}  // namespace primus::benchmark
