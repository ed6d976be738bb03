#include "train/model_templates.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <utility>

#include "util/strings.h"

namespace primus::train {
namespace {

using Keys = std::vector<std::pair<std::string, std::string>>;  // YAML key -> YAML value, in order

// One model: its architecture per backend and the layout it prefers.
struct ModelSpec {
  ModelTemplate about;
  int seq_len = 4096;
  int steps = 1000;
  double lr = 3.0e-4, min_lr = 3.0e-5;
  int warmup = 100;
  int tensor = 1;        // preferred tensor parallel size (within a node)
  int expert = 1;        // preferred expert parallel size
  int num_experts = 0;   // 0: dense
  int micro_batch = 1;
  int global_batch = 0;  // sequences per step wanted
  int vocab = 0;
  Keys megatron_model;   // model: (Megatron-LM options by dest)
  Keys megatron_args;    // megatron.args beyond the common ones
  std::string titan_name, titan_flavor, titan_assets;
  std::string trainer_model = "small";  // the example trainer's model on GPUs
};

const Keys kLlamaLike = {{"normalization", "RMSNorm"},        {"swiglu", "true"},
                         {"position_embedding_type", "rope"}, {"untie_embeddings_and_output_weights", "true"},
                         {"add_bias_linear", "false"},        {"attention_dropout", "0.0"},
                         {"hidden_dropout", "0.0"}};
const Keys kMoeArgs = {{"moe_grouped_gemm", "true"},
                       {"moe_token_dispatcher_type", "alltoall"},
                       {"moe_router_load_balancing_type", "[aux_loss]"}};

Keys Concat(Keys a, const Keys& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<ModelSpec>& Specs() {
  static const std::vector<ModelSpec> specs = [] {
    std::vector<ModelSpec> all;
    ModelSpec gpt2;
    gpt2.about = {"gpt2-124m", "GPT-2 124M", {"megatron", "torch"}};
    gpt2.seq_len = 1024;
    gpt2.steps = 5000;
    gpt2.lr = 6.0e-4;
    gpt2.min_lr = 6.0e-5;
    gpt2.warmup = 700;
    gpt2.micro_batch = 16;
    gpt2.global_batch = 512;  // 0.5M tokens, as GPT-2
    gpt2.vocab = 50257;
    gpt2.megatron_model = {{"num_layers", "12"},         {"hidden_size", "768"},
                           {"ffn_hidden_size", "3072"},  {"num_attention_heads", "12"},
                           {"max_position_embeddings", "1024"}, {"position_embedding_type", "learned_absolute"},
                           {"init_method_std", "0.02"}};
    gpt2.trainer_model = "gpt2-124m";
    all.push_back(gpt2);

    ModelSpec llama;
    llama.about = {"llama3-8b", "Llama-3-8B", {"megatron", "torchtitan", "torch"}};
    llama.seq_len = 8192;
    llama.tensor = 2;
    llama.global_batch = 128;  // 1M tokens
    llama.vocab = 128256;
    llama.megatron_model = Concat({{"num_layers", "32"},
                                   {"hidden_size", "4096"},
                                   {"ffn_hidden_size", "14336"},
                                   {"num_attention_heads", "32"},
                                   {"group_query_attention", "true"},
                                   {"num_query_groups", "8"},
                                   {"max_position_embeddings", "8192"},
                                   {"rotary_base", "500000"}},
                                  kLlamaLike);
    llama.titan_name = "llama3";
    llama.titan_flavor = "8B";
    llama.titan_assets = "./assets/hf/Llama-3.1-8B";
    all.push_back(llama);

    ModelSpec deepseek;
    deepseek.about = {"deepseek-v2-lite", "DeepSeek-V2-Lite", {"megatron", "torchtitan", "torch"}};
    deepseek.lr = 4.2e-4;
    deepseek.min_lr = 4.2e-5;
    deepseek.expert = 8;
    deepseek.num_experts = 64;
    deepseek.global_batch = 256;
    deepseek.vocab = 102400;
    deepseek.megatron_model = Concat({{"num_layers", "27"},
                                      {"hidden_size", "2048"},
                                      {"ffn_hidden_size", "10944"},
                                      {"num_attention_heads", "16"},
                                      {"multi_latent_attention", "true"},
                                      {"kv_lora_rank", "512"},
                                      {"qk_head_dim", "128"},
                                      {"qk_pos_emb_head_dim", "64"},
                                      {"v_head_dim", "128"},
                                      {"max_position_embeddings", "4096"},
                                      {"rotary_base", "10000"},
                                      {"num_experts", "64"},
                                      {"moe_ffn_hidden_size", "1408"},
                                      {"moe_shared_expert_intermediate_size", "2816"},
                                      {"moe_router_topk", "6"},
                                      {"moe_layer_freq", "\"([0]*1+[1]*26)\""}},
                                     kLlamaLike);
    deepseek.megatron_args = Concat(kMoeArgs, {{"moe_aux_loss_coeff", "[0.001]"}});
    // TorchTitan's deepseek_v3 16B flavor has DeepSeek-V2-Lite's shape: 27
    // layers, width 2048, 64 routed and 2 shared experts, top 6, MLA with kv rank 512.
    deepseek.titan_name = "deepseek_v3";
    deepseek.titan_flavor = "16B";
    deepseek.titan_assets = "./assets/hf/deepseek-moe-16b-base";
    all.push_back(deepseek);

    ModelSpec mixtral;
    mixtral.about = {"mixtral-8x7b", "Mixtral-8x7B", {"megatron", "torch"}};
    mixtral.lr = 1.0e-4;
    mixtral.min_lr = 1.0e-5;
    mixtral.expert = 8;
    mixtral.num_experts = 8;
    mixtral.global_batch = 256;
    mixtral.vocab = 32000;
    mixtral.megatron_model = Concat({{"num_layers", "32"},
                                     {"hidden_size", "4096"},
                                     {"ffn_hidden_size", "14336"},
                                     {"num_attention_heads", "32"},
                                     {"group_query_attention", "true"},
                                     {"num_query_groups", "8"},
                                     {"max_position_embeddings", "32768"},
                                     {"rotary_base", "1000000"},
                                     {"num_experts", "8"},
                                     {"moe_router_topk", "2"}},
                                    kLlamaLike);
    mixtral.megatron_args = Concat(kMoeArgs, {{"moe_aux_loss_coeff", "[0.01]"}});
    all.push_back(mixtral);

    ModelSpec qwen;
    qwen.about = {"qwen3-8b", "Qwen3-8B", {"megatron", "torchtitan", "torch"}};
    qwen.tensor = 2;
    qwen.global_batch = 256;
    qwen.vocab = 151936;
    qwen.megatron_model = Concat({{"num_layers", "36"},
                                  {"hidden_size", "4096"},
                                  {"ffn_hidden_size", "12288"},
                                  {"num_attention_heads", "32"},
                                  {"group_query_attention", "true"},
                                  {"num_query_groups", "8"},
                                  {"kv_channels", "128"},
                                  {"qk_layernorm", "true"},
                                  {"max_position_embeddings", "40960"},
                                  {"rotary_base", "1000000"}},
                                 kLlamaLike);
    qwen.titan_name = "qwen3";
    qwen.titan_flavor = "8B";
    qwen.titan_assets = "./assets/hf/Qwen3-8B";
    all.push_back(qwen);
    return all;
  }();
  return specs;
}

// The largest divisor of `of` that is at most `limit` (1 at least).
int LargestDivisorUpTo(int of, int limit) {
  for (int d = std::max(1, std::min(of, limit)); d > 1; --d) {
    if (of % d == 0) return d;
  }
  return 1;
}

// `wanted` rounded up to a multiple of `step` (at least one step).
int RoundUpTo(int wanted, int step) { return std::max(step, (wanted + step - 1) / step * step); }

// `max_tensor`: the tensor parallel size the backend allows (1 where FSDP
// shards the model over every rank instead).
TemplateLayout SizeFramework(const ModelSpec& spec, int gpus, int nodes, int max_tensor) {
  TemplateLayout layout;
  layout.nproc_per_node = gpus;
  // Tensor parallelism stays within a node.
  layout.tensor = LargestDivisorUpTo(gpus, std::min(spec.tensor, max_tensor));
  layout.data_parallel = gpus * nodes / layout.tensor;
  // Expert parallelism divides both the data-parallel size and the experts.
  if (spec.num_experts > 0) {
    layout.expert = LargestDivisorUpTo(std::gcd(layout.data_parallel, spec.num_experts), spec.expert);
  }
  layout.micro_batch = spec.micro_batch;
  layout.seq_len = spec.seq_len;
  layout.global_batch = RoundUpTo(spec.global_batch, layout.micro_batch * layout.data_parallel);
  return layout;
}

std::string Number(double value) { return fmt::format("{:.1e}", value); }

// "2 node(s) x 8 GPU(s)", or CPU workers.
std::string Scale(const TemplateRequest& request, const TemplateLayout& layout) {
  return request.gpus_per_node > 0
             ? fmt::format("{} node(s) x {} GPU(s)", request.nodes, request.gpus_per_node)
             : fmt::format("{} node(s) x {} CPU worker(s)", request.nodes, layout.nproc_per_node);
}

std::string Header(const ModelSpec& spec, const std::string& what, const TemplateRequest& request,
                   const RenderedTemplate& out) {
  std::string text =
      fmt::format("# {} {}, sized for {}.\n", spec.about.title, what, Scale(request, out.layout));
  text += fmt::format("# Written by primus-cli init {} --backend {}{}{}: a starting point, not a tuned\n",
                      spec.about.name, out.backend, fmt::format(" --gpus {}", request.gpus_per_node),
                      request.nodes > 1 ? fmt::format(" --nodes {}", request.nodes) : "");
  text += "# recipe (memory is not modelled). Run init again for another size.\n";
  text += "#   primus-cli --dry-run direct -- train pretrain --config " + out.exp_name + ".yaml   # the plan\n";
  return text;
}

std::string LayoutLine(const TemplateLayout& layout, bool global) {
  std::string text = fmt::format("parallelism: {{tensor: {}, pipeline: {}, expert: {}, micro_batch: {}", layout.tensor,
                                 layout.pipeline, layout.expert, layout.micro_batch);
  if (global) text += fmt::format(", global_batch: {}", layout.global_batch);
  return text + "}\n";
}

std::string Distributed(const TemplateLayout& layout, int nodes) {
  return fmt::format("distributed: {{nproc_per_node: {}, nnodes: {}}}\n", layout.nproc_per_node, nodes);
}

void RenderMegatron(const ModelSpec& spec, const TemplateRequest& request, RenderedTemplate* out) {
  out->layout = SizeFramework(spec, request.gpus_per_node, request.nodes, spec.tensor);
  const TemplateLayout& layout = out->layout;
  std::string& y = out->yaml;
  y = Header(spec, "pretraining on Megatron-LM with mock data", request, *out);
  y += "# Real data: set megatron.args.mock_data to false and give data_path, with the model's\n"
       "# tokenizer (tokenizer_type HuggingFaceTokenizer, tokenizer_model ...). The Megatron-LM\n"
       "# checkout: megatron.path here, or MEGATRON_PATH.\n";
  y += "exp_name: " + out->exp_name + "\nbackend: megatron\nmegatron:\n  args:\n";
  Keys args = {{"mock_data", "true"},
               {"tokenizer_type", "NullTokenizer"},
               {"vocab_size", std::to_string(spec.vocab)},
               {"use_distributed_optimizer", "true"}};
  if (layout.tensor > 1) args.push_back({"sequence_parallel", "true"});
  args = Concat(args, {{"lr_decay_style", "cosine"},
                       {"min_lr", Number(spec.min_lr)},
                       {"weight_decay", "0.1"},
                       {"clip_grad", "1.0"},
                       {"adam_beta2", "0.95"},
                       {"eval_iters", "0"}});
  args = Concat(args, spec.megatron_args);
  for (const auto& [key, value] : args) y += "    " + key + ": " + value + "\n";
  y += "model:\n  name: " + spec.about.name + "\n";
  for (const auto& [key, value] : spec.megatron_model) y += "  " + key + ": " + value + "\n";
  y += fmt::format("training: {{steps: {}, seq_len: {}, lr: {}, warmup: {}, dtype: bf16, log_interval: 1}}\n",
                   spec.steps, layout.seq_len, Number(spec.lr), spec.warmup);
  y += LayoutLine(layout, true) + Distributed(layout, request.nodes);
  y += "checkpoint: {interval: 500, keep_last: 2}\nfault_tolerance: {max_restarts: 3, hang_timeout: 900}\n";
}

void RenderTorchTitan(const ModelSpec& spec, const TemplateRequest& request, RenderedTemplate* out) {
  out->layout = SizeFramework(spec, request.gpus_per_node, request.nodes, /*max_tensor=*/1);  // FSDP over every rank
  const TemplateLayout& layout = out->layout;
  std::string& y = out->yaml;
  y = Header(spec, "pretraining on TorchTitan (FSDP)", request, *out);
  y += "# The tokenizer comes from model.hf_assets_path (TorchTitan's scripts/download_hf_assets.py);\n"
       "# the c4_test dataset ships in TorchTitan's tests/assets: run from the TorchTitan checkout.\n";
  y += "exp_name: " + out->exp_name + "\nbackend: torchtitan\n";
  y += fmt::format("model: {{name: {}, flavor: {}, hf_assets_path: {}}}\n", spec.titan_name, spec.titan_flavor,
                   spec.titan_assets);
  y += fmt::format("training: {{steps: {}, seq_len: {}, lr: {}, warmup: {}, dtype: bf16, log_interval: 10}}\n",
                   spec.steps, layout.seq_len, Number(spec.lr), spec.warmup);
  y += LayoutLine(layout, true) + Distributed(layout, request.nodes);
  y += "torchtitan:\n  toml:\n    training: {dataset: c4_test}\n"
       "    activation_checkpoint: {mode: selective, selective_ac_option: op}\n";
  y += "checkpoint: {interval: 500, keep_last: 2}\nfault_tolerance: {max_restarts: 3, hang_timeout: 900}\n";
}

void RenderExampleTrainer(const ModelSpec& spec, const TemplateRequest& request, RenderedTemplate* out) {
  bool cpu = request.gpus_per_node == 0;
  TemplateLayout& layout = out->layout;
  layout.nproc_per_node = cpu ? 2 : request.gpus_per_node;
  layout.data_parallel = layout.nproc_per_node * request.nodes;
  std::string model = cpu ? "tiny" : spec.trainer_model;
  bool gpt2 = model == "gpt2-124m";
  layout.seq_len = cpu ? 64 : gpt2 ? 1024 : 256;
  layout.micro_batch = cpu ? 4 : gpt2 ? 16 : 32;
  layout.global_batch = cpu ? 0 : RoundUpTo(gpt2 ? 512 : 256, layout.micro_batch * layout.data_parallel);
  std::string& y = out->yaml;
  y = Header(spec, gpt2 ? "on primus-cli's example trainer (a byte-level GPT-2 124M)"
                        : "at small scale on primus-cli's example trainer",
             request, *out);
  if (!gpt2) {
    y += "# The example trainer is a byte-level GPT ('" + model + "'), a stand-in for " + spec.about.title +
         ": the launch,\n# checkpoints and fault tolerance are the real ones; for the architecture use --backend " +
         spec.about.backends.front() + ".\n";
  }
  y += "exp_name: " + out->exp_name + "\nbackend: torch\n";
  // Quoted: the path is whatever the installation's is.
  y += "torch: {script: " + nlohmann::json(request.trainer_script).dump() + "}\n";
  y += "model: {name: " + model + "}\n";
  y += fmt::format("training: {{steps: {}, seq_len: {}, lr: {}, warmup: {}, dtype: {}, device: {}, log_interval: 10}}\n",
                   cpu ? 200 : 2000, layout.seq_len, cpu ? "2.0e-3" : Number(gpt2 ? 6.0e-4 : 1.0e-3), cpu ? 10 : 100,
                   cpu ? "fp32" : "bf16", cpu ? "cpu" : "cuda");
  y += LayoutLine(layout, !cpu) + Distributed(layout, request.nodes);
  y += "checkpoint: {interval: " + std::string(cpu ? "50" : "500") + ", keep_last: 2}\n";
  y += "fault_tolerance: {max_restarts: 3, hang_timeout: " + std::string(cpu ? "120" : "600") + "}\n";
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const ModelSpec& spec : Specs()) names.push_back(spec.about.name);
  return names;
}

}  // namespace

const std::vector<ModelTemplate>& ModelTemplates() {
  static const std::vector<ModelTemplate> templates = [] {
    std::vector<ModelTemplate> all;
    for (const ModelSpec& spec : Specs()) all.push_back(spec.about);
    return all;
  }();
  return templates;
}

// The template `name` means: its own name, in any case and with _ for -, or
// the start (4 characters or more) of exactly one name (qwen3, deepseek_v2,
// llama3, mixtral).
const ModelSpec* FindSpec(const std::string& name) {
  std::string wanted = ReplaceAll(ToLower(name), "_", "-");
  const ModelSpec* prefixed = nullptr;
  int prefixes = 0;
  for (const ModelSpec& spec : Specs()) {
    if (spec.about.name == wanted) return &spec;
    if (wanted.size() >= 4 && spec.about.name.starts_with(wanted)) prefixed = &spec, ++prefixes;
  }
  return prefixes == 1 ? prefixed : nullptr;
}

Result<RenderedTemplate> RenderTemplate(const TemplateRequest& request) {
  if (request.gpus_per_node < 0 || request.nodes < 1) {
    return UsageError("init: --gpus is 0 or more and --nodes 1 or more");
  }
  const ModelSpec* spec = FindSpec(request.model);
  if (spec == nullptr) {
    return UsageError("init: no template for '" + request.model + "'" + DidYouMean(request.model, ModelNames()),
                      "the templates: " + Join(ModelNames(), ", ") + " (primus-cli init --list)");
  }
  RenderedTemplate out;
  out.model = spec->about.name;
  out.backend = !request.backend.empty() ? request.backend
                : request.gpus_per_node == 0 ? "torch"
                                             : spec->about.backends.front();
  const std::vector<std::string>& backends = spec->about.backends;
  if (std::find(backends.begin(), backends.end(), out.backend) == backends.end()) {
    std::vector<std::string> known = {"torch", "megatron", "torchtitan"};
    bool exists = std::find(known.begin(), known.end(), out.backend) != known.end();
    return UsageError(exists ? "init: " + spec->about.title + " has no " + out.backend + " template" +
                                   (out.backend == "torchtitan" ? " (TorchTitan v0.2.2 has no such model)" : "")
                             : "init: unknown backend '" + out.backend + "'" + DidYouMean(out.backend, known),
                      "--backend " + Join(backends, ", ") + " for " + spec->about.name);
  }
  if (request.gpus_per_node == 0 && out.backend != "torch") {
    return UsageError("init: the " + out.backend + " backend runs on GPUs, and no GPU was found or given",
                      "give the GPUs per node where it will run: --gpus 8");
  }
  out.exp_name = spec->about.name + "-" + out.backend;
  if (out.backend == "megatron") {
    RenderMegatron(*spec, request, &out);
  } else if (out.backend == "torchtitan") {
    RenderTorchTitan(*spec, request, &out);
  } else {
    RenderExampleTrainer(*spec, request, &out);
  }
  const TemplateLayout& l = out.layout;
  std::string batch = l.global_batch > 0 ? fmt::format("global batch {} x {} tokens", l.global_batch, l.seq_len)
                                         : fmt::format("global batch {} x workers x {} tokens", l.micro_batch, l.seq_len);
  out.summary = fmt::format("{} on {}, {}: TP {} PP {} EP {} DP {}, {}", spec->about.title,
                            out.backend == "megatron"     ? "Megatron-LM"
                            : out.backend == "torchtitan" ? "TorchTitan"
                                                          : "the example trainer",
                            Scale(request, l), l.tensor, l.pipeline, l.expert, l.data_parallel, batch);
  return out;
}

}  // namespace primus::train
