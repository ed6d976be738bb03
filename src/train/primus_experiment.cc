#include "train/primus_experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "config/merge.h"
#include "config/yaml_loader.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::train {
namespace {

using config::Origin;
using config::Value;

// Primus's own `train` options: argparse takes them before the overrides.
bool IsPrimusTrainOption(std::string_view key) {
  return key == "data_path" || key == "backend_path" || key == "export_config" || key == "config" || key == "exp";
}

Value PrimusScalar(const std::string& text, const Origin& origin) {
  std::string lower = ToLower(text);
  if (lower == "true" || lower == "false") return Value::Bool(lower == "true", origin);
  if (text == "None") return Value::Null(origin);
  if (text.find('.') != std::string::npos) {
    if (auto number = ParseDouble(text)) return Value::Double(*number, origin);
  }
  if (auto number = ParseInt(text)) return Value::Int(*number, origin);
  return Value::String(text, origin);
}

// "modules.pre_trainer" of the file, with the alias Primus applies.
const Value* FindModule(const Value& modules, const std::string& wanted, std::string* name) {
  if (const Value* module = modules.Get(wanted)) {
    *name = wanted;
    return module;
  }
  std::string alias = wanted == "pre_trainer" ? "post_trainer" : "pre_trainer";
  if (const Value* module = modules.Get(alias)) {
    *name = alias;
    return module;
  }
  return nullptr;
}

// primus/configs/<kind>/<framework>/<name>[.yaml], as Primus's preset loader finds it.
Result<std::string> PresetPath(const PrimusInstall& install, const std::string& kind, const std::string& framework,
                               const std::string& name, const Value& named_at) {
  std::string file = name.ends_with(".yaml") || name.ends_with(".yml") ? name : name + ".yaml";
  if (file.find("..") != std::string::npos || file.starts_with("/")) {
    return config::ConfigErrorAt(named_at.origin(), "'" + name + "' leaves Primus's " + kind + " directory",
                                 "name a file under " + install.configs_dir() + "/" + kind + "/" + framework + "/");
  }
  std::string path = install.configs_dir() + "/" + kind + "/" + framework + "/" + file;
  if (!PathExists(path)) {
    return config::ConfigErrorAt(named_at.origin(),
                                 "Primus has no " + std::string(kind == "models" ? "model" : "module config") + " '" +
                                     name + "' for " + framework + " (looked for " + path + ")",
                                 "the files there are Primus " + install.version + "'s; check the name, or point "
                                 "PRIMUS_PATH at the Primus version this experiment was written for");
  }
  return path;
}

struct LayoutKeys {
  const char* tensor;
  const char* pipeline;
  const char* context;
  const char* expert;
  const char* micro_batch;
  const char* global_batch;
  const char* experts;  // the expert count
};

const LayoutKeys* KeysFor(const std::string& framework) {
  static const LayoutKeys megatron{"tensor_model_parallel_size", "pipeline_model_parallel_size",
                                   "context_parallel_size",      "expert_model_parallel_size",
                                   "micro_batch_size",           "global_batch_size",
                                   "num_experts"};
  static const LayoutKeys torchtitan{"parallelism.tensor_parallel_degree", "parallelism.pipeline_parallel_degree",
                                     "parallelism.context_parallel_degree", "parallelism.expert_parallel_degree",
                                     "training.local_batch_size",           "training.global_batch_size",
                                     ""};
  if (framework == "megatron") return &megatron;
  if (framework == "torchtitan") return &torchtitan;
  return nullptr;
}

// "tensor_model_parallel_size 3 (flag tensor_model_parallel_size=3)"
std::string Named(const Value& params, const char* key, int64_t value) {
  const Value* found = params.Find(key);
  std::string where = found && !found->origin().source.empty() ? " (" + found->origin().Describe() + ")" : " (default)";
  return fmt::format("{} {}{}", key, value, where);
}

}  // namespace

Value ParsePrimusOverrides(const std::vector<std::string>& args) {
  Value tree = Value::EmptyMap();
  auto set = [&](std::string key, const std::string& text, const std::string& shown) {
    while (key.starts_with("-")) key.erase(0, 1);
    key = std::string(Trim(key));
    if (key.empty() || IsPrimusTrainOption(key)) return;
    Origin origin = Origin::Flag(shown);
    // Like Primus: dots nest; a non-map on the way is replaced.
    Value* node = &tree;
    std::vector<std::string> parts = Split(key, '.');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      Value* next = node->Get(parts[i]);
      if (!next || !next->IsMap()) {
        node->Put(parts[i], Value::EmptyMap(origin));
        next = node->Get(parts[i]);
      }
      node = next;
    }
    node->Put(parts.back(), PrimusScalar(std::string(Trim(text)), origin));
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string item(Trim(args[i]));
    if (item.empty()) continue;
    if (size_t equals = item.find('='); equals != std::string::npos) {
      set(item.substr(0, equals), item.substr(equals + 1), item);
    } else if (item.starts_with("--") && i + 1 < args.size() && !args[i + 1].starts_with("--")) {
      set(item, args[i + 1], item + " " + args[i + 1]);
      ++i;
    } else if (item.starts_with("--")) {
      set(item, "true", item);
    }
  }
  return tree;
}

Result<PrimusExperiment> ReadPrimusExperiment(const Value& file, const std::string& subtask,
                                              const PrimusInstall& install, const std::vector<std::string>& args,
                                              const Environment& environment) {
  PrimusExperiment experiment;
  experiment.args = args;
  const Value* modules = file.Get("modules");
  if (!modules || !modules->IsMap() || modules->AsMap().empty()) {
    return config::ConfigErrorAt(modules ? modules->origin() : file.origin(),
                                 "a Primus-format experiment needs a map of modules under 'modules:'",
                                 "write modules: {pre_trainer: {framework: megatron, config: pre_trainer.yaml, "
                                 "model: llama3.1_8B.yaml, overrides: {...}}}");
  }
  std::string wanted = subtask == "posttrain" ? "post_trainer" : "pre_trainer";
  const Value* module = FindModule(*modules, wanted, &experiment.module_name);
  if (!module) {
    std::vector<std::string> names;
    for (const auto& [name, value] : modules->AsMap()) names.push_back(name);
    return config::ConfigErrorAt(modules->origin(),
                                 "train " + subtask + " runs the module '" + wanted + "', and this experiment has " +
                                     Join(names, ", "),
                                 "Primus runs pre_trainer for pretrain and post_trainer for posttrain (either one "
                                 "stands in for the other)");
  }
  if (!module->IsMap()) {
    return config::ConfigErrorAt(module->origin(), "modules." + experiment.module_name + " must be a map of keys");
  }
  const Value* framework = module->Get("framework");
  if (!framework || !framework->IsString() || framework->AsString().empty()) {
    return config::ConfigErrorAt(framework ? framework->origin() : module->origin(),
                                 "modules." + experiment.module_name + " needs 'framework:' (megatron, torchtitan, "
                                 "maxtext, megatron_bridge, ...)");
  }
  experiment.framework = framework->AsString();
  const Value* config_name = module->Get("config");
  const Value* model_name = module->Get("model");
  for (const Value* named : {config_name, model_name}) {
    if (named && !named->IsString()) {
      return config::ConfigErrorAt(named->origin(), "a module's config and model name a file: a string, not " +
                                                        named->DescribeForMessage());
    }
  }
  if (config_name) experiment.module_config = config_name->AsString();
  if (model_name) experiment.model = model_name->AsString();

  // What Primus will train with, in its order: module <- model <- overrides <- command line.
  Value params = Value::EmptyMap();
  if (config_name && model_name) {
    auto module_path = PresetPath(install, "modules", experiment.framework, experiment.module_config, *config_name);
    if (!module_path.ok()) return module_path.error();
    auto model_path = PresetPath(install, "models", experiment.framework, experiment.model, *model_name);
    if (!model_path.ok()) return model_path.error();
    // Primus's own files: what our reader cannot follow is Primus's to read,
    // and the plan says the layout was not checked here.
    auto module_file = config::LoadYamlFile(*module_path, environment);
    auto model_file = module_file.ok() ? config::LoadYamlFile(*model_path, environment) : module_file;
    if (module_file.ok() && model_file.ok()) {
      params = config::Merge(*module_file, *model_file);
    } else {
      experiment.unresolved = (module_file.ok() ? model_file : module_file).error().message;
    }
  } else if (config_name || model_name) {
    // Primus takes a module with a model and no config as already flattened.
    if (config_name) {
      return config::ConfigErrorAt(config_name->origin(),
                                   "modules." + experiment.module_name + " names a config but no 'model:'",
                                   "add model: <file under primus/configs/models/" + experiment.framework + "/>");
    }
  }
  for (const auto& [key, value] : module->AsMap()) {
    if (key == "framework" || key == "config" || key == "model" || key == "overrides") continue;
    if (!params.Get(key)) params.Put(key, value);
  }
  if (const Value* overrides = module->Get("overrides"); overrides && !overrides->IsNull()) {
    if (!overrides->IsMap()) {
      return config::ConfigErrorAt(overrides->origin(), "modules." + experiment.module_name + ".overrides must be a map");
    }
    params = config::Merge(params, *overrides);
  }
  if (experiment.unresolved.empty()) experiment.params = config::Merge(params, ParsePrimusOverrides(args));
  return experiment;
}

Result<PrimusLayout> CheckPrimusLayout(const PrimusExperiment& experiment, int world_size) {
  PrimusLayout layout;
  const LayoutKeys* keys = KeysFor(experiment.framework);
  if (!keys || !experiment.params.IsMap()) return layout;
  const Value& params = experiment.params;
  // A whole number from 1 (0 allowed for the global batch); null or absent is the default.
  auto read = [&](const char* key, int64_t fallback, int64_t minimum, int64_t* out) -> Status {
    *out = fallback;
    if (!*key) return Status::Ok();
    const Value* value = params.Find(key);
    if (!value || value->IsNull()) return Status::Ok();
    std::optional<int64_t> number;
    if (value->IsInt()) number = value->AsInt();
    else if (value->IsString()) number = ParseInt(value->AsString());
    constexpr int64_t kMax = int64_t{1} << 30;
    if (!number || *number < minimum || *number > kMax) {
      return config::ConfigErrorAt(value->origin(),
                                   fmt::format("{} must be a whole number from {} to {}, not {}", key, minimum, kMax,
                                               value->DescribeForMessage()));
    }
    *out = *number;
    return Status::Ok();
  };
  int64_t experts = 0;
  bool torchtitan = experiment.framework == "torchtitan";
  for (auto [key, out, fallback, minimum] :
       {std::tuple{keys->tensor, &layout.tensor, int64_t{1}, int64_t{1}}, {keys->pipeline, &layout.pipeline, 1, 1},
        {keys->context, &layout.context, 1, 1}, {keys->expert, &layout.expert, 1, 1},
        {keys->micro_batch, &layout.micro_batch, 1, 1},
        // TorchTitan: -1 means local batch x DP.
        {keys->global_batch, &layout.global_batch, 0, torchtitan ? -1 : 0}, {keys->experts, &experts, 0, 0}}) {
    if (Status status = read(key, fallback, minimum, out); !status.ok()) return status.error();
  }
  if (layout.global_batch < 0) layout.global_batch = 0;
  layout.known = true;
  int64_t model_parallel = layout.tensor * layout.pipeline * layout.context;
  if (world_size % model_parallel != 0) {
    return ConfigError(fmt::format("{} x {} x {} = {} does not divide the world size {}",
                                   Named(params, keys->tensor, layout.tensor), Named(params, keys->pipeline, layout.pipeline),
                                   Named(params, keys->context, layout.context), model_parallel, world_size),
                       fmt::format("choose parallel sizes whose product divides nnodes x nproc_per_node = {}, or "
                                   "override them after --config (--{} N)",
                                   world_size, Split(keys->tensor, '.').back()));
  }
  layout.data_parallel = world_size / model_parallel;
  if (layout.expert > 1 && (layout.data_parallel * layout.context) % layout.expert != 0) {
    return ConfigError(fmt::format("{} does not divide the data-parallel x context-parallel size {} x {} (world size {})",
                                   Named(params, keys->expert, layout.expert), layout.data_parallel, layout.context,
                                   world_size),
                       "expert parallelism splits the data-parallel ranks: choose an expert-parallel size that divides them");
  }
  if (layout.expert > 1 && experts > 0 && experts % layout.expert != 0) {
    return ConfigError(fmt::format("{} does not divide the expert count, {}", Named(params, keys->expert, layout.expert),
                                   Named(params, keys->experts, experts)),
                       "each expert-parallel rank holds the same number of experts");
  }
  int64_t per_step = layout.micro_batch * layout.data_parallel;
  if (layout.global_batch > 0 && layout.global_batch % per_step != 0) {
    return ConfigError(fmt::format("{} is not a multiple of {} x data-parallel size {} = {}",
                                   Named(params, keys->global_batch, layout.global_batch),
                                   Named(params, keys->micro_batch, layout.micro_batch), layout.data_parallel, per_step),
                       "global batch = micro batch x data-parallel size x gradient accumulation");
  }
  if (layout.global_batch == 0) layout.global_batch = per_step;
  layout.grad_accum = layout.global_batch / per_step;
  return layout;
}

std::string DescribePrimusPlan(const PrimusExperiment& experiment, const PrimusLayout& layout, int world_size) {
  std::string text = "module " + experiment.module_name + ": " + experiment.framework;
  if (!experiment.module_config.empty()) text += ", config " + experiment.module_config;
  if (!experiment.model.empty()) text += ", model " + experiment.model;
  if (layout.known) {
    text += fmt::format("; TP {} PP {} CP {} EP {}, DP {}, global batch {} = {} x {} x {}", layout.tensor,
                        layout.pipeline, layout.context, layout.expert, layout.data_parallel, layout.global_batch,
                        layout.micro_batch, layout.data_parallel, layout.grad_accum);
  } else if (!experiment.unresolved.empty()) {
    text += "; layout not read (" + experiment.unresolved + "): Primus checks it";
  } else {
    text += fmt::format("; layout: Primus checks it for {} (world size {})", experiment.framework, world_size);
  }
  return text;
}

}  // namespace primus::train
