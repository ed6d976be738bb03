#include "train/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "config/merge.h"
#include "config/overrides.h"
#include "config/schema.h"
#include "config/yaml_loader.h"
#include "train/megatron_flags.h"
#include "train/megatron_release.h"
#include "train/torchtitan_keys.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::train {
namespace {

using config::Origin;
using config::Schema;
using config::SchemaKey;
using config::Value;
using config::ValueType;

// Ranges (docs/experiment.md): beyond any real job, and small enough that
// TP x PP x CP and micro batch x DP x accumulation never overflow.
// nodes x workers per node (kMaxProcsPerNode) fits in an int.
constexpr int64_t kMaxParallel = 1 << 20;
constexpr int64_t kMaxBatch = 1 << 30;
constexpr int64_t kMaxNodes = 1 << 18;

const Schema& ExperimentSchema() {
  static const Schema schema({
      {"exp_name", ValueType::kString, "", "experiment name; the experiment directory is <workspace>/<exp_name>_<time>"},
      {"description", ValueType::kString, "", "free text, kept in the snapshot"},
      {"workspace", ValueType::kString, "output", "where experiment directories are created"},
      {"backend", ValueType::kString, "torch", "torch | megatron | torchtitan | command"},
      {"python.interpreter", ValueType::kString, "python3", "the Python that runs the workers"},
      {"python.venv", ValueType::kString, "", "a virtual environment: its bin/python is used"},
      {"python.conda_env", ValueType::kString, "", "a conda environment name: run through 'conda run -n'"},
      {"torch.script", ValueType::kString, "", "the training script (torch backend)"},
      {"torch.args", ValueType::kStringList, "", "extra script arguments"},
      {"jax.script", ValueType::kString, "", "the training script (jax backend): each worker gets JAX's distributed variables"},
      {"jax.args", ValueType::kStringList, "", "the script's arguments"},
      {"torch.training_flags", ValueType::kBool, "true", "pass model/training/checkpoint keys as --flags (examples/gpt)"},
      {"megatron.path", ValueType::kString, "", "Megatron-LM checkout (default: $MEGATRON_PATH)"},
      {"megatron.script", ValueType::kString, "pretrain_gpt.py", "entry script inside megatron.path"},
      {"megatron.posttrain_script", ValueType::kString, "pretrain_gpt.py", "entry script of train posttrain (run with --sft)"},
      {"megatron.args", ValueType::kAny, "", "Megatron-LM options by dest: num_layers: 32 (docs/experiment.md)"},
      {"megatron.release", ValueType::kString, "auto",
       "the option table: auto (the checkout's own, else the newest compiled), checkout, or a release such as core_v0.13"},
      {"megatron.verbatim_args", ValueType::kAny, "",
       "arguments passed to Megatron-LM as written, checked against no table (a fork's option)"},
      {"torchtitan.module", ValueType::kString, "torchtitan.train", "the module run with python -m"},
      {"torchtitan.path", ValueType::kString, "",
       "TorchTitan checkout, where job.custom_config_module is read (default: $TORCHTITAN_PATH, then here)"},
      {"torchtitan.posttrain_module", ValueType::kString, "", "the module train posttrain runs (TorchTitan has none)"},
      {"torchtitan.toml", ValueType::kAny, "", "extra TOML sections merged into the generated job config"},
      {"command.argv", ValueType::kStringList, "", "command backend: the worker argv"},
      {"model", ValueType::kAny, "", "model settings passed to the backend (name, layers, hidden size, ...)"},
      {"training.steps", ValueType::kInt, "100", "optimizer steps", 1, INT64_MAX},
      {"training.grad_accum", ValueType::kInt, "0", "micro batches per step (0: derived from global_batch)", 0, kMaxParallel},
      {"training.seq_len", ValueType::kInt, "0", "sequence length in tokens (0: the backend's default)", 0, INT64_MAX},
      {"training.lr", ValueType::kDouble, "0.0003", "peak learning rate"},
      {"training.warmup", ValueType::kInt, "0", "warm-up steps", 0, INT64_MAX},
      {"training.seed", ValueType::kInt, "1234", "random seed"},
      {"training.log_interval", ValueType::kInt, "10", "steps between log lines", 1, INT64_MAX},
      {"training.dtype", ValueType::kString, "", "fp32 | bf16 | fp16 (empty: the backend's default)"},
      {"training.device", ValueType::kString, "auto", "auto | cpu | cuda"},
      {"parallelism.tensor", ValueType::kInt, "1", "tensor-parallel size", 1, kMaxParallel},
      {"parallelism.pipeline", ValueType::kInt, "1", "pipeline-parallel size", 1, kMaxParallel},
      {"parallelism.context", ValueType::kInt, "1", "context-parallel size", 1, kMaxParallel},
      {"parallelism.expert", ValueType::kInt, "1", "expert-parallel size", 1, kMaxParallel},
      {"parallelism.micro_batch", ValueType::kInt, "1", "sequences per micro batch per data-parallel rank", 1, kMaxParallel},
      {"parallelism.global_batch", ValueType::kInt, "0", "sequences per step (0: micro_batch x DP x grad_accum)", 0, kMaxBatch},
      {"distributed.nproc_per_node", ValueType::kString, "", "workers per node (default: the launcher's, auto = GPUs)"},
      {"distributed.nnodes", ValueType::kInt, "0", "nodes (default: the launcher's)", 0, kMaxNodes},
      {"checkpoint.dir", ValueType::kString, "", "checkpoint directory (default: <experiment dir>/checkpoints)"},
      {"checkpoint.interval", ValueType::kInt, "0", "steps between checkpoints (0: none)", 0, INT64_MAX},
      {"checkpoint.keep_last", ValueType::kInt, "2", "checkpoints kept", 0, INT64_MAX},
      {"checkpoint.resume", ValueType::kString, "auto", "auto | none | PATH"},
      {"fault_tolerance.max_restarts", ValueType::kInt, "-1", "restarts of all workers on failure (-1: the launcher's)", -1, 1000000},
      {"fault_tolerance.hang_timeout", ValueType::kDouble, "-1", "seconds of silence that count as a hang (-1: the launcher's)"},
      {"fault_tolerance.exclude_bad_nodes", ValueType::kBool, "false", "leave a bad node out and go on (true turns on direct.exclude_bad_nodes)"},
      {"env", ValueType::kStringMap, "", "variables for the workers (over profiles, under --env)"},
      {"hooks.dirs", ValueType::kStringList, "", "extra hook directories, relative to the experiment file"},
      {"variants", ValueType::kAny, "", "settings by world size: {16: {parallelism: {tensor: 2}}}"},
  });
  return schema;
}

// Every file that contributed a value, in first-seen order.
void CollectFiles(const Value& value, std::vector<std::string>* files) {
  auto add = [&](const Origin& origin) {
    if (origin.line == 0) return;
    for (const auto& name : origin.extends_chain) {
      if (std::find(files->begin(), files->end(), name) == files->end()) files->push_back(name);
    }
    if (std::find(files->begin(), files->end(), origin.source) == files->end()) files->push_back(origin.source);
  };
  add(value.origin());
  if (value.IsList()) for (const auto& item : value.AsList()) CollectFiles(item, files);
  if (value.IsMap()) for (const auto& [key, item] : value.AsMap()) CollectFiles(item, files);
}

// The launcher's part of a Primus-format file: where outputs go and the
// workers' variables. The rest (modules, platform, ...) is Primus's to read
// (train/primus_experiment.h), and the file reaches Primus as it is.
Result<Value> PrimusLauncherKeys(const Value& file) {
  Value out = Value::EmptyMap();
  for (const char* key : {"exp_name", "workspace"}) {
    const Value* value = file.Get(key);
    if (!value || value->IsNull()) continue;
    if (!value->IsScalar()) {
      return config::ConfigErrorAt(value->origin(), std::string(key) + " must be a string, not " + value->DescribeForMessage());
    }
    out.Put(key, Value::String(value->ScalarText(), value->origin()));
  }
  if (const Value* env = file.Get("env"); env && !env->IsNull()) out.Put("env", *env);
  out.Put("backend", Value::String("primus", file.origin()));
  return out;
}

int IntAt(const Value& root, std::string_view path) { return static_cast<int>(root.Find(path)->AsInt()); }

Status ApplyOverrides(const ExperimentRequest& request, Value* merged) {
  for (const std::string& assignment : request.overrides) {
    std::string path = assignment.substr(0, assignment.find('='));
    if (!ExperimentSchema().Find(path) && !path.starts_with("model.") && !path.starts_with("torchtitan.toml.") &&
        !path.starts_with("env.") && !path.starts_with("megatron.args.")) {
      return UsageError("unknown experiment key '" + path + "' in override '" + assignment + "'" +
                            DidYouMean(path, ExperimentKeys()),
                        "overrides are written KEY=VALUE with a key of docs/experiment.md, e.g. training.steps=50");
    }
    if (Status status = config::ApplyOverride(merged, assignment, Origin::Flag(assignment)); !status.ok()) return status;
  }
  return Status::Ok();
}

bool IsExpNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// exp_name becomes a directory name (<workspace>/<exp_name>_<time>): no path
// separators, no "..", no control characters, nothing a shell or a log line
// would misread.
Status CheckExpName(const Value& resolved) {
  const Value* value = resolved.Find("exp_name");
  const std::string& name = value->AsString();
  if (name.empty()) return Status::Ok();
  constexpr size_t kMaxLength = 128;
  std::string problem;
  if (name.size() > kMaxLength) {
    problem = "is " + std::to_string(name.size()) + " characters long (at most " + std::to_string(kMaxLength) + ")";
  } else if (name.front() == '.' || name.front() == '-') {
    problem = std::string("starts with '") + name.front() + "'";
  } else {
    for (char c : name) {
      if (IsExpNameCharacter(c)) continue;
      unsigned char byte = static_cast<unsigned char>(c);
      problem = byte < 0x20 || byte >= 0x7f ? fmt::format("contains the byte 0x{:02x}", byte)
                                            : fmt::format("contains '{}'", c);
      break;
    }
  }
  if (problem.empty()) return Status::Ok();
  std::string shown = name.size() > 40 ? name.substr(0, 40) + "..." : name;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return config::ConfigErrorAt(value->origin(), "exp_name '" + shown + "' " + problem + "; it names a directory",
                               "use letters, digits, '.', '_' and '-' (not first: '.' or '-'), at most 128 characters");
}

// Reads the typed fields out of the validated tree.
void FillFields(ExperimentConfig* experiment) {
  const Value& r = experiment->resolved;
  experiment->exp_name = r.Find("exp_name")->AsString();
  if (experiment->exp_name.empty()) {
    // From the file name, which the user did not choose as a directory name: made safe.
    std::string base = Split(experiment->file, '/').back();
    experiment->exp_name = base.substr(0, std::min<size_t>(base.rfind('.'), 128));
    for (char& c : experiment->exp_name) {
      if (!IsExpNameCharacter(c)) c = '_';
    }
    if (!experiment->exp_name.empty() && (experiment->exp_name.front() == '.' || experiment->exp_name.front() == '-')) {
      experiment->exp_name.front() = '_';
    }
  }
  experiment->workspace = r.Find("workspace")->AsString();
  experiment->backend = r.Find("backend")->AsString();
  std::string venv = r.Find("python.venv")->AsString();
  experiment->interpreter = venv.empty() ? r.Find("python.interpreter")->AsString() : JoinPath(venv, "bin/python");
  experiment->conda_env = r.Find("python.conda_env")->AsString();
  experiment->parallelism = {IntAt(r, "parallelism.tensor"),      IntAt(r, "parallelism.pipeline"),
                             IntAt(r, "parallelism.context"),     IntAt(r, "parallelism.expert"),
                             IntAt(r, "parallelism.micro_batch"), IntAt(r, "parallelism.global_batch")};
  experiment->grad_accum = IntAt(r, "training.grad_accum");
  experiment->nproc_per_node = r.Find("distributed.nproc_per_node")->AsString();
  experiment->nnodes = IntAt(r, "distributed.nnodes");
  experiment->env.clear();
  for (const auto& [key, value] : r.Find("env")->AsMap()) experiment->env[key] = value.ScalarText();
  experiment->max_restarts = IntAt(r, "fault_tolerance.max_restarts");
  experiment->hang_timeout = r.Find("fault_tolerance.hang_timeout")->AsDouble();
  experiment->exclude_bad_nodes = r.Find("fault_tolerance.exclude_bad_nodes")->AsBool();
}

// The torchtitan backend: its key table, with a custom config module's keys.
Status ChooseTorchTitanTable(const ExperimentRequest& request, ExperimentConfig* experiment) {
  if (experiment->primus_style || experiment->backend != "torchtitan") return Status::Ok();
  auto table = ChooseTorchTitanKeys({&experiment->resolved, request.environment, experiment->interpreter, ""});
  if (!table.ok()) return table.error();
  experiment->torchtitan_keys = table->keys;
  experiment->torchtitan_keys_source = table->source;
  for (const std::string& warning : table->warnings) {
    if (std::find(experiment->warnings.begin(), experiment->warnings.end(), warning) == experiment->warnings.end()) {
      experiment->warnings.push_back(warning);
    }
  }
  return Status::Ok();
}

// The megatron backend: the option table (megatron_release.h) and the keys against it.
Status CheckMegatronExperiment(const ExperimentRequest& request, ExperimentConfig* experiment) {
  if (experiment->primus_style || experiment->backend != "megatron") return Status::Ok();
  auto table = ChooseMegatronTable({&experiment->resolved, request.environment, experiment->interpreter});
  if (!table.ok()) return table.error();
  experiment->megatron_table = table->flags;
  experiment->megatron_table_source = table->source;
  auto warn = [&](const std::string& text) {  // loaded again for the world size: said once
    if (std::find(experiment->warnings.begin(), experiment->warnings.end(), text) == experiment->warnings.end()) {
      experiment->warnings.push_back(text);
    }
  };
  for (const std::string& warning : table->warnings) warn(warning);
  if (Status status = CheckMegatronKeys(experiment->resolved, *experiment->megatron_table); !status.ok()) {
    return status;
  }
  std::vector<std::string> verbatim = MegatronVerbatimArguments(experiment->resolved);
  if (!verbatim.empty()) {
    warn("megatron.verbatim_args " + ShellJoin(verbatim) +
         ": passed to Megatron-LM as written, checked against no option table");
  }
  return Status::Ok();
}

Status CheckBackend(const ExperimentConfig& experiment) {
  static const std::vector<std::string> backends = {"torch", "megatron", "torchtitan", "jax", "command"};
  const Value* backend = experiment.resolved.Find("backend");
  if (experiment.primus_style) return CheckExpName(experiment.resolved);
  if (experiment.backend == "primus") {
    return config::ConfigErrorAt(backend->origin(), "backend 'primus' is how Primus-format experiments run",
                                 "write the experiment in Primus's format (work_group, user_name, exp_name, workspace, "
                                 "modules:), or choose torch, megatron, torchtitan or command");
  }
  if (std::find(backends.begin(), backends.end(), experiment.backend) == backends.end()) {
    return config::ConfigErrorAt(backend->origin(), "unknown backend '" + experiment.backend + "'" +
                                                        DidYouMean(experiment.backend, backends),
                                 "backends: torch, megatron, torchtitan, jax, command");
  }
  if (experiment.backend == "torch" || experiment.backend == "jax") {
    const std::string key = experiment.backend + ".script";
    const Value* script = experiment.resolved.Find(key);
    if (script->AsString().empty()) {
      return ConfigError(experiment.file + ": the " + experiment.backend + " backend needs '" + key + "'",
                         "add " + experiment.backend + ": {script: path/to/train.py}");
    }
    if (!PathExists(script->AsString())) {
      return config::ConfigErrorAt(script->origin(), key + " '" + script->AsString() + "' does not exist",
                                   "paths are relative to the directory primus-cli runs in (" + CurrentDir() + ")");
    }
  }
  if (experiment.backend == "command" && experiment.resolved.Find("command.argv")->AsList().empty()) {
    return ConfigError(experiment.file + ": the command backend needs 'command.argv'", "add command: {argv: [prog, arg]}");
  }
  // Our format's Megatron and TorchTitan keys, against their releases' own tables.
  if (!experiment.primus_style && experiment.backend == "torchtitan") {
    const TorchTitanKeys& table = experiment.torchtitan_keys ? *experiment.torchtitan_keys : TorchTitanKeys::Builtin();
    if (Status status = CheckTorchTitanKeys(experiment.resolved, table); !status.ok()) return status;
    if (const Value* dtype = experiment.resolved.Find("training.dtype"); dtype->AsString() == "fp16") {
      return config::ConfigErrorAt(dtype->origin(), "training.dtype fp16: TorchTitan trains in bf16 or fp32",
                                   "write training.dtype: bf16");
    }
  }
  if (Status status = CheckNprocPerNode(experiment); !status.ok()) return status;
  return CheckExpName(experiment.resolved);
}

}  // namespace

Status CheckNprocPerNode(const ExperimentConfig& experiment) {
  if (experiment.nproc_per_node.empty()) return Status::Ok();
  const std::string value = ToLower(Trim(experiment.nproc_per_node));
  if (value == "auto" || value == "gpu" || value == "cpu") return Status::Ok();
  std::optional<int64_t> number = ParseInt(value);
  if (number && *number >= 1 && *number <= kMaxProcsPerNode) return Status::Ok();
  return config::ConfigErrorAt(experiment.resolved.Find("distributed.nproc_per_node")->origin(),
                               "distributed.nproc_per_node must be auto, gpu, cpu or a number from 1 to " +
                                   std::to_string(kMaxProcsPerNode) + ", not '" + experiment.nproc_per_node + "'",
                               "write distributed.nproc_per_node: 8 (or auto: one worker per GPU)");
}

std::vector<std::string> ExperimentKeys() {
  std::vector<std::string> keys;
  for (const SchemaKey& key : ExperimentSchema().keys()) keys.push_back(key.path);
  return keys;
}

Result<ExperimentConfig> LoadExperiment(const ExperimentRequest& request) {
  if (request.file.empty()) {
    return UsageError("train needs an experiment file", "write: train pretrain --config exp.yaml");
  }
  if (!PathExists(request.file)) {
    return ConfigError("experiment file " + request.file + " does not exist",
                       "paths are relative to the directory primus-cli runs in (" + CurrentDir() + ")");
  }
  auto file = config::LoadYamlFile(request.file, request.environment);
  if (!file.ok()) return file.error();
  if (!file->IsMap()) return ConfigError(request.file + ": an experiment file is a map of keys");

  ExperimentConfig experiment;
  experiment.file = request.file;
  CollectFiles(*file, &experiment.files);
  // Bases first, the experiment file itself last, as they were merged.
  auto self = std::find(experiment.files.begin(), experiment.files.end(), file->origin().source);
  if (self != experiment.files.end()) std::rotate(self, self + 1, experiment.files.end());
  Value layer = *file;
  if (layer.Get("modules") || layer.Get("work_group")) {
    // Primus format: it runs through Primus, never half-translated into ours.
    experiment.primus_style = true;
    experiment.primus_file = layer;
    auto launcher_keys = PrimusLauncherKeys(layer);
    if (!launcher_keys.ok()) return launcher_keys.error();
    layer = *launcher_keys;
  }
  if (!experiment.primus_style && !layer.AsMap().empty()) {
    // Not one key of ours and no modules: some other kind of file.
    std::vector<std::string> tops;
    for (const std::string& key : ExperimentKeys()) tops.push_back(key.substr(0, key.find('.')));
    bool any_known = std::any_of(layer.AsMap().begin(), layer.AsMap().end(), [&](const auto& entry) {
      return std::find(tops.begin(), tops.end(), entry.first) != tops.end();
    });
    if (!any_known) {
      std::vector<std::string> keys;
      for (const auto& [key, value] : layer.AsMap()) keys.push_back(key);
      if (keys.size() > 4) keys.resize(4), keys.push_back("...");
      return ConfigError(request.file + " is not an experiment file: its keys (" + Join(keys, ", ") +
                             ") are neither Primus's format (work_group, user_name, exp_name, workspace, modules:) nor ours",
                         "train --config takes an experiment; docs/experiment.md shows both formats");
    }
  }
  if (Status status = ExperimentSchema().Validate(&layer, config::ScalarSource::kTyped); !status.ok()) {
    return status.error();
  }
  Value merged = config::Merge(ExperimentSchema().Defaults(), layer);
  // A Primus-format experiment's overrides are Primus's (they follow --config verbatim).
  if (!experiment.primus_style) {
    if (Status status = ApplyOverrides(request, &merged); !status.ok()) return status.error();
  }
  if (Status status = ExperimentSchema().Validate(&merged, config::ScalarSource::kTyped); !status.ok()) {
    return status.error();
  }
  experiment.resolved = merged;
  FillFields(&experiment);
  if (Status status = ChooseTorchTitanTable(request, &experiment); !status.ok()) return status.error();
  if (Status status = CheckBackend(experiment); !status.ok()) return status.error();
  if (Status status = CheckMegatronExperiment(request, &experiment); !status.ok()) return status.error();
  return experiment;
}

Status ResolveForWorldSize(const ExperimentRequest& request, int world_size, ExperimentConfig* experiment) {
  const Value* variants = experiment->resolved.Find("variants");
  if (variants && variants->IsMap()) {
    for (const auto& [key, variant] : variants->AsMap()) {
      auto size = ParseInt(key);
      if (!size) {
        return config::ConfigErrorAt(variant.origin(), "variants are keyed by world size (a number), not '" + key + "'");
      }
      if (*size != world_size) continue;
      Value layer = variant;
      if (Status status = ExperimentSchema().Validate(&layer, config::ScalarSource::kTyped); !status.ok()) return status;
      Value merged = config::Merge(experiment->resolved, layer);
      if (Status status = ApplyOverrides(request, &merged); !status.ok()) return status;
      experiment->resolved = merged;
      FillFields(experiment);
    }
  }

  // Every check below reads the effective values: file, variant, then overrides.
  if (Status status = ChooseTorchTitanTable(request, experiment); !status.ok()) return status;
  if (Status status = CheckBackend(*experiment); !status.ok()) return status;
  if (Status status = CheckMegatronExperiment(request, experiment); !status.ok()) return status;
  const Parallelism& p = experiment->parallelism;
  const Value& r = experiment->resolved;
  // "parallelism.tensor 3 (flag parallelism.tensor=3)": a key, its value and where it came from.
  auto named = [&](std::string_view path) {
    const Value* value = r.Find(path);
    return std::string(path) + " " + value->ScalarText() + " (" + value->origin().Describe() + ")";
  };
  // The origin to locate an error at: the first of these keys the user set.
  auto located = [&](std::initializer_list<std::string_view> paths) {
    for (std::string_view path : paths) {
      if (r.Find(path)->origin().source != "default") return r.Find(path)->origin();
    }
    return r.Find(*paths.begin())->origin();
  };
  if (world_size < 1) return ConfigError("the world size must be at least 1, not " + std::to_string(world_size));
  // The schema bounds every size by 2^20, so these products fit in 64 bits.
  int64_t model_parallel = int64_t{p.tensor} * p.pipeline * p.context;
  if (world_size % model_parallel != 0) {
    return config::ConfigErrorAt(
        located({"parallelism.tensor", "parallelism.pipeline", "parallelism.context"}),
        "tensor x pipeline x context = " + std::to_string(p.tensor) + " x " + std::to_string(p.pipeline) + " x " +
            std::to_string(p.context) + " = " + std::to_string(model_parallel) + " does not divide the world size " +
            std::to_string(world_size) + " (" + named("parallelism.tensor") + ", " + named("parallelism.pipeline") +
            ", " + named("parallelism.context") + ")",
        "choose parallel sizes whose product divides nnodes x nproc_per_node, or add a 'variants:' entry for " +
            std::to_string(world_size) + " workers");
  }
  int64_t data_parallel = world_size / model_parallel;
  if (p.expert > 1 && data_parallel % p.expert != 0) {
    return config::ConfigErrorAt(r.Find("parallelism.expert")->origin(),
                                 "expert-parallel size " + std::to_string(p.expert) +
                                     " does not divide the data-parallel size " + std::to_string(data_parallel) +
                                     " = world size " + std::to_string(world_size) + " / (tensor x pipeline x context " +
                                     std::to_string(model_parallel) + ")",
                                 "choose parallelism.expert dividing " + std::to_string(data_parallel) +
                                     ", or add a 'variants:' entry for " + std::to_string(world_size) + " workers");
  }
  // Experts are spread evenly over the expert-parallel ranks.
  for (const char* path : {"model.num_experts", "megatron.args.num_experts"}) {
    const Value* experts = r.Find(path);
    if (p.expert > 1 && experts && experts->IsInt() && experts->AsInt() % p.expert != 0) {
      return config::ConfigErrorAt(located({"parallelism.expert", path}),
                                   "expert-parallel size " + std::to_string(p.expert) + " does not divide the " +
                                       std::to_string(experts->AsInt()) + " experts (" + named("parallelism.expert") +
                                       ", " + named(path) + ")",
                                   "choose parallelism.expert dividing " + std::string(path));
    }
  }
  int64_t per_step = p.micro_batch * data_parallel;
  if (p.global_batch > 0) {
    if (p.global_batch % per_step != 0) {
      return config::ConfigErrorAt(
          r.Find("parallelism.global_batch")->origin(),
          "global batch " + std::to_string(p.global_batch) + " is not a multiple of micro batch x data-parallel size = " +
              std::to_string(p.micro_batch) + " x " + std::to_string(data_parallel) + " = " + std::to_string(per_step) +
              " (" + named("parallelism.global_batch") + ", " + named("parallelism.micro_batch") + ")",
          "global_batch = micro_batch x data-parallel size x grad_accum");
    }
    int64_t derived = p.global_batch / per_step;
    if (experiment->grad_accum > 0 && experiment->grad_accum != derived) {
      return config::ConfigErrorAt(
          r.Find("training.grad_accum")->origin(),
          "grad_accum " + std::to_string(experiment->grad_accum) + " disagrees with global batch " +
              std::to_string(p.global_batch) + " = " + std::to_string(p.micro_batch) + " x " +
              std::to_string(data_parallel) + " x " + std::to_string(derived) + " (" + named("training.grad_accum") +
              ", " + named("parallelism.global_batch") + ")",
          "set grad_accum to " + std::to_string(derived) + " or remove it (it is derived from global_batch)");
    }
    experiment->grad_accum = static_cast<int>(derived);  // at most global_batch, an int
  } else {
    if (experiment->grad_accum < 1) experiment->grad_accum = 1;
    int64_t global_batch = per_step * experiment->grad_accum;
    if (global_batch > kMaxBatch) {
      return config::ConfigErrorAt(
          r.Find("parallelism.micro_batch")->origin(),
          "the global batch micro batch x data-parallel size x grad_accum = " + std::to_string(p.micro_batch) + " x " +
              std::to_string(data_parallel) + " x " + std::to_string(experiment->grad_accum) + " = " +
              std::to_string(global_batch) + " is above " + std::to_string(kMaxBatch),
          "lower parallelism.micro_batch or training.grad_accum");
    }
    experiment->parallelism.global_batch = static_cast<int>(global_batch);
  }
  return Status::Ok();
}

}  // namespace primus::train
