#include "benchmark/model_gemm.h"

#include <fmt/format.h>

#include "benchmark/gemm_request.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

using K = OptionSpec::Kind;

struct Preset {
  const char* name;
  ModelDims dims;
};

ModelDims Dense(int64_t seqlen, int64_t hidden, int64_t intermediate, int64_t heads, int64_t kv_heads, int64_t head_dim,
                int64_t vocab) {
  ModelDims d;
  d.seqlen = seqlen;
  d.hidden = hidden;
  d.intermediate = intermediate;
  d.heads = heads;
  d.kv_heads = kv_heads;
  d.head_dim = head_dim;
  d.vocab = vocab;
  return d;
}

ModelDims Deepseek(int64_t hidden, int64_t intermediate, int64_t moe_intermediate, int64_t heads, int64_t experts_per_tok,
                   int64_t routed, int64_t shared, int64_t q_lora_rank, int64_t vocab) {
  ModelDims d;
  d.seqlen = 4096;
  d.hidden = hidden;
  d.intermediate = intermediate;
  d.kv_lora_rank = 512;
  d.moe_intermediate = moe_intermediate;
  d.heads = heads;
  d.experts_per_tok = experts_per_tok;
  d.routed_experts = routed;
  d.shared_experts = shared;
  d.q_lora_rank = q_lora_rank;
  d.qk_nope_head_dim = 128;
  d.qk_rope_head_dim = 64;
  d.v_head_dim = 128;
  d.vocab = vocab;
  return d;
}

// The public models' published dimensions (the presets of Primus's benchmarks).
const std::vector<Preset>& Presets(ModelFamily family) {
  static const std::vector<Preset> dense = {
      {"Llama2_7B", Dense(4096, 4096, 11008, 32, 32, 128, 32000)},
      {"Llama2_70B", Dense(4096, 8192, 28672, 64, 8, 128, 32000)},
      {"Llama3.1_8B", Dense(8192, 4096, 14336, 32, 8, 128, 128256)},
      {"Llama3.1_70B", Dense(8192, 8192, 28672, 64, 8, 128, 128256)},
      {"Llama3.1_405B", Dense(8192, 16384, 53248, 128, 8, 128, 128256)},
      {"Mistral_8x7B", Dense(4096, 4096, 14336, 32, 8, 128, 32000)},
      {"Mistral_8x22B", Dense(4096, 6144, 16384, 48, 8, 128, 32000)},
  };
  static const std::vector<Preset> deepseek = {
      {"Deepseek_V2_Lite", Deepseek(2048, 10944, 1408, 16, 6, 64, 2, 0, 102400)},
      {"Deepseek_V2", Deepseek(5120, 12288, 1536, 128, 6, 160, 2, 1536, 102400)},
      {"Deepseek_V3", Deepseek(7168, 18432, 2048, 128, 8, 256, 1, 1536, 129280)},
  };
  return family == ModelFamily::kDense ? dense : deepseek;
}

// The defaults without --model (Primus's argument defaults).
ModelDims Defaults(ModelFamily family) {
  if (family == ModelFamily::kDense) return Dense(2048, 4096, 11008, 32, 32, 128, 32000);
  ModelDims d = Deepseek(4096, 12288, 1536, 64, 6, 128, 2, 0, 128256);
  return d;
}

// A dimension flag and the field it sets.
struct DimFlag {
  const char* flag;
  int64_t ModelDims::*field;
  int64_t lowest;
};

const std::vector<DimFlag>& DimFlags(ModelFamily family) {
  static const std::vector<DimFlag> dense = {
      {"--seqlen", &ModelDims::seqlen, 1},        {"--hidden-size", &ModelDims::hidden, 1},
      {"--intermediate-size", &ModelDims::intermediate, 1}, {"--num-attention-heads", &ModelDims::heads, 1},
      {"--num-key-value-heads", &ModelDims::kv_heads, 1},   {"--head-dim", &ModelDims::head_dim, 1},
      {"--vocab-size", &ModelDims::vocab, 1},
  };
  static const std::vector<DimFlag> deepseek = {
      {"--seqlen", &ModelDims::seqlen, 1},
      {"--hidden-size", &ModelDims::hidden, 1},
      {"--intermediate-size", &ModelDims::intermediate, 1},
      {"--kv-lora-rank", &ModelDims::kv_lora_rank, 1},
      {"--moe-intermediate-size", &ModelDims::moe_intermediate, 1},
      {"--num-attention-heads", &ModelDims::heads, 1},
      {"--num-experts-per-tok", &ModelDims::experts_per_tok, 1},
      {"--n-routed-experts", &ModelDims::routed_experts, 1},
      {"--n-shared-experts", &ModelDims::shared_experts, 0},
      {"--q-lora-rank", &ModelDims::q_lora_rank, 0},
      {"--qk-nope-head-dim", &ModelDims::qk_nope_head_dim, 1},
      {"--qk-rope-head-dim", &ModelDims::qk_rope_head_dim, 0},
      {"--v-head-dim", &ModelDims::v_head_dim, 1},
      {"--vocab-size", &ModelDims::vocab, 1},
  };
  return family == ModelFamily::kDense ? dense : deepseek;
}

std::string FamilyName(ModelFamily family) { return family == ModelFamily::kDense ? "gemm-dense" : "gemm-deepseek"; }

// Flags that go on to `benchmark gemm` unchanged.
bool ForGemm(const std::string& name) {
  for (const char* flag : {"--dtype", "--duration", "--iters", "--warmup", "--device", "--json", "--csv", "--output",
                           "--append", "--tune"}) {
    if (name == flag) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> ModelPresetNames(ModelFamily family) {
  std::vector<std::string> names;
  for (const Preset& preset : Presets(family)) names.emplace_back(preset.name);
  return names;
}

const std::vector<OptionSpec>& ModelGemmOptions(ModelFamily family) {
  auto build = [](ModelFamily which) {
    std::vector<OptionSpec> table = {
        {{"--model"}, K::kValue, "NAME", "", "a preset's dimensions: " + Join(ModelPresetNames(which), ", ")}};
    ModelDims defaults = Defaults(which);
    for (const DimFlag& dim : DimFlags(which)) {
      std::string help = fmt::format("default {}", defaults.*dim.field);
      if (std::string(dim.flag) == "--q-lora-rank") help = "0 or none: queries without a low-rank projection (default)";
      table.push_back({{dim.flag}, K::kValue, "N", "", help});
    }
    table.push_back({{"--mbs"}, K::kValue, "N", "", "micro-batch size: tokens = mbs x seqlen (default 1)"});
    table.push_back({{"--dtype"}, K::kValue, "bf16|fp16|fp32|tf32|fp8", "", "element type (default bf16)"});
    table.push_back({{"--duration"}, K::kValue, "SECONDS", "", "time each shape this long (default 3)"});
    table.push_back({{"--iters"}, K::kValue, "N", "", "timed iterations per shape instead of --duration"});
    table.push_back({{"--warmup"}, K::kValue, "N", "", "untimed iterations first"});
    table.push_back({{"--device"}, K::kValue, "auto|cpu|gpu", "", "where to run (default: GPUs when the host has any)"});
    table.push_back({{"--json"}, K::kFlag, "", "", "the report as JSON on standard output instead of the table"});
    table.push_back({{"--csv"}, K::kFlag, "", "", "the report as CSV on standard output instead of the table"});
    table.push_back({{"--output", "--output-file"}, K::kValue, "FILE", "",
                     "also write the report to FILE: .md, .csv, .tsv, .json or .jsonl"});
    table.push_back({{"--append"}, K::kFlag, "", "", "add the rows to an existing --output FILE"});
    table.push_back({{"--tune"}, K::kFlag, "", "", "time the library's top candidate algorithms and keep the fastest"});
    return table;
  };
  static const std::vector<OptionSpec> dense = build(ModelFamily::kDense);
  static const std::vector<OptionSpec> deepseek = build(ModelFamily::kDeepseek);
  return family == ModelFamily::kDense ? dense : deepseek;
}

Result<ModelGemmRequest> ParseModelGemmRequest(ModelFamily family, const std::vector<std::string>& args) {
  std::string context = "benchmark " + FamilyName(family);
  auto parsed = ParseOptions(args, 0, {&ModelGemmOptions(family)}, UnknownOptionPolicy::kReject, context);
  if (!parsed.ok()) return parsed.error();
  if (parsed->next < args.size()) {
    return UsageError("unexpected argument '" + args[parsed->next] + "' for " + context, "see primus-cli benchmark --help");
  }
  ModelGemmRequest request;
  request.family = family;
  request.dims = Defaults(family);
  // The preset first, so that dimension flags override it wherever they are written.
  for (const ParsedOption& option : parsed->options) {
    if (option.spec->names.front() != "--model") continue;
    const Preset* found = nullptr;
    for (const Preset& preset : Presets(family)) {
      if (ToLower(preset.name) == ToLower(option.value)) found = &preset;
    }
    if (found == nullptr) {
      std::vector<std::string> lower;
      for (const std::string& name : ModelPresetNames(family)) lower.push_back(ToLower(name));
      return UsageError("unknown --model '" + option.value + "' for " + context + DidYouMean(ToLower(option.value), lower),
                        "presets: " + Join(ModelPresetNames(family), ", ") + "; or give the dimensions as flags");
    }
    request.model = found->name;
    request.dims = found->dims;
  }
  bool timed = false;
  for (const ParsedOption& option : parsed->options) {
    const std::string& name = option.spec->names.front();
    if (name == "--model") continue;
    if (ForGemm(name)) {
      request.gemm_args.push_back(name);
      if (option.spec->kind != K::kFlag) request.gemm_args.push_back(option.value);
      else if (option.value != "true") request.gemm_args.back() += "=false";
      timed = timed || name == "--duration" || name == "--iters";
      continue;
    }
    std::string value = ToLower(option.value);
    int64_t lowest = 1;
    int64_t* field = &request.mbs;
    for (const DimFlag& dim : DimFlags(family)) {
      if (name == dim.flag) {
        field = &(request.dims.*dim.field);
        lowest = dim.lowest;
      }
    }
    if (name == "--q-lora-rank" && (value == "none" || value == "null")) value = "0";
    auto number = ParseInt(value);
    if (!number || *number < lowest || *number > (int64_t{1} << 24)) {
      return UsageError("option " + option.written + " must be a number from " + std::to_string(lowest) + ", not '" +
                            option.value + "'",
                        "write e.g. " + option.written + " 4096");
    }
    *field = *number;
  }
  if (!timed) request.gemm_args.insert(request.gemm_args.end(), {"--duration", "3"});
  return request;
}

Result<std::vector<LinearLayer>> ModelLayers(const ModelGemmRequest& request) {
  const ModelDims& d = request.dims;
  int64_t tokens = request.mbs * d.seqlen;
  std::vector<LinearLayer> layers;
  if (request.family == ModelFamily::kDense) {
    layers = {{"attn_qkv", tokens, d.hidden, (d.heads + 2 * d.kv_heads) * d.head_dim},
              {"attn_out", tokens, d.hidden, d.hidden},
              {"mlp_up", tokens, d.hidden, 2 * d.intermediate},
              {"mlp_down", tokens, d.intermediate, d.hidden},
              {"vocab", tokens, d.hidden, d.vocab}};
  } else {
    int64_t q_head_dim = d.qk_nope_head_dim + d.qk_rope_head_dim;
    if (d.q_lora_rank == 0) {
      layers.push_back({"attn_q", tokens, d.hidden, d.heads * q_head_dim});
    } else {
      layers.push_back({"attn_q_down", tokens, d.hidden, d.q_lora_rank});
      layers.push_back({"attn_q_up", tokens, d.q_lora_rank, d.heads * q_head_dim});
    }
    layers.push_back({"attn_kv_down", tokens, d.hidden, d.kv_lora_rank + d.qk_rope_head_dim});
    layers.push_back({"attn_kv_up", tokens, d.kv_lora_rank, d.heads * (d.qk_nope_head_dim + d.v_head_dim)});
    layers.push_back({"attn_out", tokens, d.heads * d.v_head_dim, d.hidden});
    layers.push_back({"router", tokens, d.hidden, d.routed_experts});
    if (d.shared_experts > 0) {
      layers.push_back({"shared_gateup", tokens, d.hidden, 2 * d.intermediate});
      layers.push_back({"shared_down", tokens, d.intermediate, d.hidden});
    }
    // Tokens per routed expert with a balanced router (Primus rounds down per sequence).
    int64_t per_expert = request.mbs * (d.seqlen * d.experts_per_tok / d.routed_experts);
    if (per_expert < 1) {
      return UsageError(fmt::format("--seqlen {} x --num-experts-per-tok {} / --n-routed-experts {} leaves no token for an "
                                    "expert",
                                    d.seqlen, d.experts_per_tok, d.routed_experts),
                        "give a longer --seqlen or fewer --n-routed-experts");
    }
    layers.push_back({"moe_gateup", per_expert, d.hidden, 2 * d.moe_intermediate});
    layers.push_back({"moe_down", per_expert, d.moe_intermediate, d.hidden});
    layers.push_back({"vocab", tokens, d.hidden, d.vocab});
  }
  for (const LinearLayer& layer : layers) {
    for (int64_t size : {layer.tokens, layer.in, layer.out}) {
      if (size < 1 || size > (int64_t{1} << 20)) {
        return UsageError(fmt::format("{} of {} would be {} tokens x {} in x {} out: each must be from 1 to 1048576",
                                      layer.name, FamilyName(request.family), layer.tokens, layer.in, layer.out),
                          "check the dimension flags (and --mbs)");
      }
    }
  }
  return layers;
}

std::vector<GemmShape> PhaseShapes(const LinearLayer& layer) {
  return {GemmShape{layer.out, layer.tokens, layer.in, true, false, layer.name + ".fwd"},
          GemmShape{layer.in, layer.out, layer.tokens, false, true, layer.name + ".wgrad"},
          GemmShape{layer.in, layer.tokens, layer.out, false, false, layer.name + ".dgrad"}};
}

Result<std::vector<std::string>> ModelGemmArgs(const ModelGemmRequest& request) {
  auto layers = ModelLayers(request);
  if (!layers.ok()) return layers.error();
  std::vector<std::string> args;
  for (const LinearLayer& layer : *layers) {
    for (const GemmShape& shape : PhaseShapes(layer)) args.insert(args.end(), {"--shape", GemmShapeArgument(shape)});
  }
  args.insert(args.end(), request.gemm_args.begin(), request.gemm_args.end());
  return args;
}

std::string ModelGemmTitle(const ModelGemmRequest& request) {
  return "benchmark " + FamilyName(request.family) + ": " + (request.model.empty() ? "custom dimensions" : request.model);
}

std::vector<std::string> ModelGemmSettings(const ModelGemmRequest& request) {
  std::vector<std::string> lines = {"model: " + (request.model.empty() ? std::string("custom") : request.model),
                                    fmt::format("mbs: {}", request.mbs)};
  ModelDims dims = request.dims;
  for (const DimFlag& dim : DimFlags(request.family)) {
    std::string key = ReplaceAll(std::string(dim.flag).substr(2), "-", "_");
    lines.push_back(fmt::format("{}: {}", key, dims.*dim.field));
  }
  lines.push_back("phases: fwd (TN), wgrad (NT), dgrad (NN); BLAS column-major M N K");
  return lines;
}

}  // namespace primus::benchmark
