// The experiments `primus-cli init` writes: built-in templates for common
// models (GPT-2 124M, Llama-3-8B, DeepSeek-V2-Lite, Mixtral-8x7B, Qwen3-8B),
// each for the backends that have it (our example trainer at small scale,
// Megatron-LM, TorchTitan), sized for a number of GPUs per node and nodes.
// The architecture values are the models' published ones, written as the
// backend's own options (Megatron-LM's by dest, TorchTitan's model flavors);
// the layout follows the rules the launcher checks, so that the file passes
// `--dry-run` at the size it was written for. Memory is not modelled: the
// layout is a starting point, not a tuned recipe.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::train {

struct ModelTemplate {
  std::string name;                   // what init takes: llama3-8b
  std::string title;                  // Llama-3-8B
  std::vector<std::string> backends;  // the backends that have it, the first the default on GPUs
};

const std::vector<ModelTemplate>& ModelTemplates();

struct TemplateRequest {
  std::string model;
  std::string backend;        // "" = the model's default (torch without GPUs)
  int gpus_per_node = 0;      // 0: CPU workers (the torch backend only)
  int nodes = 1;
  std::string trainer_script; // the example trainer's train.py, for the torch backend
};

struct TemplateLayout {
  int tensor = 1, pipeline = 1, expert = 1, data_parallel = 1;
  int micro_batch = 1;
  int global_batch = 0;  // 0: derived (micro batch x DP)
  int seq_len = 0;
  int nproc_per_node = 1;
};

struct RenderedTemplate {
  std::string model;     // the template's name (init took "qwen3" for qwen3-8b)
  std::string backend;   // as chosen
  std::string exp_name;  // <model>-<backend>
  std::string yaml;
  std::string summary;   // "Llama-3-8B on Megatron-LM, 2 nodes x 8 GPUs: TP 2 PP 1 EP 1 DP 8, ..."
  TemplateLayout layout;
};

// The experiment for `request`; the model is a template's name, in any case
// and with _ for -, or the start (4 characters or more) of exactly one name
// ("qwen3", "deepseek_v2"). A usage error names an unknown model or
// backend (with the near one) or a backend the model has no template for.
Result<RenderedTemplate> RenderTemplate(const TemplateRequest& request);

}  // namespace primus::train
