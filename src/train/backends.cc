#include "train/backends.h"

#include <fmt/format.h>

#include <cmath>

#include "config/scalar_types.h"
#include "train/megatron_flags.h"
#include "train/torchtitan_keys.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::train {
namespace {

using config::Value;

std::string Text(const Value& root, std::string_view path) {
  const Value* value = root.Find(path);
  return value ? value->ScalarText() : "";
}
int64_t Int(const Value& root, std::string_view path) { return root.Find(path)->AsInt(); }

std::vector<std::string> PythonPrefix(const ExperimentConfig& experiment) {
  if (!experiment.conda_env.empty()) return {"conda", "run", "--no-capture-output", "-n", experiment.conda_env, "python"};
  return {experiment.interpreter};
}

std::string CheckpointDir(const BackendRequest& inputs) {
  std::string dir = Text(inputs.experiment->resolved, "checkpoint.dir");
  return dir.empty() ? inputs.experiment_dir + "/checkpoints" : dir;
}

std::string Resume(const BackendRequest& inputs) {
  return inputs.resume.empty() ? Text(inputs.experiment->resolved, "checkpoint.resume") : inputs.resume;
}

void Flag(std::vector<std::string>* argv, const std::string& flag, const std::string& value) {
  argv->push_back(flag);
  argv->push_back(value);
}

// The torch backend: the documented mapping of examples/gpt/README.md.
Result<BackendCommand> TorchCommand(const BackendRequest& inputs) {
  const ExperimentConfig& e = *inputs.experiment;
  const Value& r = e.resolved;
  BackendCommand command;
  command.argv = PythonPrefix(e);
  command.argv.push_back(Text(r, "torch.script"));
  if (r.Find("torch.training_flags")->AsBool()) {
    if (std::string model = Text(r, "model.name"); !model.empty()) Flag(&command.argv, "--model", model);
    Flag(&command.argv, "--steps", Text(r, "training.steps"));
    Flag(&command.argv, "--micro-batch", std::to_string(e.parallelism.micro_batch));
    Flag(&command.argv, "--grad-accum", std::to_string(e.grad_accum));
    if (Int(r, "training.seq_len") > 0) Flag(&command.argv, "--seq-len", Text(r, "training.seq_len"));
    Flag(&command.argv, "--lr", Text(r, "training.lr"));
    Flag(&command.argv, "--warmup", Text(r, "training.warmup"));
    Flag(&command.argv, "--seed", Text(r, "training.seed"));
    Flag(&command.argv, "--log-interval", Text(r, "training.log_interval"));
    if (std::string dtype = Text(r, "training.dtype"); !dtype.empty()) Flag(&command.argv, "--dtype", dtype);
    Flag(&command.argv, "--device", Text(r, "training.device"));
    for (const char* name : {"tensor", "pipeline", "context", "expert"}) {
      int64_t size = Int(r, std::string("parallelism.") + name);
      if (size != 1) Flag(&command.argv, std::string("--") + name + "-parallel", std::to_string(size));
    }
    if (Int(r, "checkpoint.interval") > 0) {
      command.checkpoint_dir = CheckpointDir(inputs);
      Flag(&command.argv, "--ckpt-dir", command.checkpoint_dir);
      Flag(&command.argv, "--ckpt-interval", Text(r, "checkpoint.interval"));
      Flag(&command.argv, "--keep-last", Text(r, "checkpoint.keep_last"));
      Flag(&command.argv, "--resume", Resume(inputs));
      if (Resume(inputs) == "auto" && !inputs.resume_fallback.empty()) {
        Flag(&command.argv, "--resume-fallback", inputs.resume_fallback);
      }
    }
    command.metrics_file = inputs.experiment_dir + "/metrics.jsonl";
    Flag(&command.argv, "--metrics-file", command.metrics_file);
  }
  for (const Value& arg : r.Find("torch.args")->AsList()) command.argv.push_back(arg.ScalarText());
  return command;
}

// Primus-style files keep their overrides as text ("true", "2"): the
// Primus layout's own rules (true: the bare switch, false: omitted).
void PrimusStyleArguments(const Value& r, std::vector<std::string>* argv) {
  if (const Value* model = r.Find("model"); model && model->IsMap()) {
    for (const auto& [key, value] : model->AsMap()) {
      if (key == "name" || !value.IsScalar()) continue;
      if (value.IsBool()) {
        if (value.AsBool()) argv->push_back("--" + ReplaceAll(key, "_", "-"));
        continue;
      }
      Flag(argv, "--" + ReplaceAll(key, "_", "-"), value.ScalarText());
    }
  }
  if (const Value* args = r.Find("megatron.args"); args && args->IsMap()) {
    for (const auto& [key, value] : args->AsMap()) {
      std::string flag = "--" + ReplaceAll(key, "_", "-");
      std::string text = value.ScalarText();
      if (text == "true") argv->push_back(flag);
      else if (text != "false") Flag(argv, flag, text);
    }
  }
}

// The table the experiment was checked against at load (the newest compiled
// one for an experiment made in code without loading).
const MegatronFlags& MegatronTableOf(const ExperimentConfig& e) {
  return e.megatron_table ? *e.megatron_table : MegatronFlags::Builtin();
}

// Whether model: or megatron.args give this Megatron dest (not null).
bool GivesMegatronDest(const Value& r, const MegatronFlags& table, std::string_view dest) {
  for (const char* section : {"model", "megatron.args"}) {
    const Value* map = r.Find(section);
    if (!map || !map->IsMap()) continue;
    for (const auto& [key, value] : map->AsMap()) {
      if (!value.IsNull() && table.DestOf(key) == dest) return true;
    }
  }
  return false;
}

// Megatron-LM's command line (megatron/training/arguments.py at the pinned
// release): our keys first, then model: and megatron.args by its parser's rules.
Result<BackendCommand> MegatronCommand(const BackendRequest& inputs) {
  const ExperimentConfig& e = *inputs.experiment;
  const Value& r = e.resolved;
  std::string path = Text(r, "megatron.path");
  if (path.empty() && inputs.environment.count("MEGATRON_PATH")) path = inputs.environment.at("MEGATRON_PATH");
  if (path.empty()) {
    return UnavailableError("the megatron backend needs a Megatron-LM checkout",
                            "set megatron.path in the experiment, or export MEGATRON_PATH=/path/to/Megatron-LM");
  }
  bool posttrain = inputs.subtask == "posttrain";
  if (posttrain && !r.Find("megatron.args.sft") && MegatronTableOf(e).DestOf("sft").empty()) {
    return ConfigError("train posttrain needs Megatron-LM's --sft, which " + e.megatron_table_source + " has not",
                       "core_v0.13 and newer have it; set megatron.release or megatron.path to such a release");
  }
  BackendCommand command;
  command.argv = PythonPrefix(e);
  command.argv.push_back(JoinPath(path, Text(r, posttrain ? "megatron.posttrain_script" : "megatron.script")));
  Flag(&command.argv, "--tensor-model-parallel-size", std::to_string(e.parallelism.tensor));
  Flag(&command.argv, "--pipeline-model-parallel-size", std::to_string(e.parallelism.pipeline));
  Flag(&command.argv, "--context-parallel-size", std::to_string(e.parallelism.context));
  Flag(&command.argv, "--expert-model-parallel-size", std::to_string(e.parallelism.expert));
  Flag(&command.argv, "--micro-batch-size", std::to_string(e.parallelism.micro_batch));
  Flag(&command.argv, "--global-batch-size", std::to_string(e.parallelism.global_batch));
  if (Int(r, "training.seq_len") > 0) {
    Flag(&command.argv, "--seq-length", Text(r, "training.seq_len"));
    // The model's own limit when given (it may be longer than the training sequences).
    if (!GivesMegatronDest(r, MegatronTableOf(e), "max_position_embeddings")) {
      Flag(&command.argv, "--max-position-embeddings", Text(r, "training.seq_len"));
    }
  }
  Flag(&command.argv, "--train-iters", Text(r, "training.steps"));
  Flag(&command.argv, "--lr", Text(r, "training.lr"));
  Flag(&command.argv, "--lr-warmup-iters", Text(r, "training.warmup"));
  Flag(&command.argv, "--seed", Text(r, "training.seed"));
  Flag(&command.argv, "--log-interval", Text(r, "training.log_interval"));
  std::string dtype = Text(r, "training.dtype");
  if (dtype == "bf16") command.argv.push_back("--bf16");
  if (dtype == "fp16") command.argv.push_back("--fp16");
  if (Int(r, "checkpoint.interval") > 0) {
    command.checkpoint_dir = CheckpointDir(inputs);
    Flag(&command.argv, "--save", command.checkpoint_dir);
    Flag(&command.argv, "--save-interval", Text(r, "checkpoint.interval"));
    if (Resume(inputs) != "none") {
      Flag(&command.argv, "--load", Resume(inputs) == "auto" ? command.checkpoint_dir : Resume(inputs));
    }
  }
  if (e.primus_style) {
    PrimusStyleArguments(r, &command.argv);
  } else {
    auto arguments = MegatronKeyArguments(r, MegatronTableOf(e));
    if (!arguments.ok()) return arguments.error();
    command.argv.insert(command.argv.end(), arguments->begin(), arguments->end());
    std::vector<std::string> verbatim = MegatronVerbatimArguments(r);
    command.argv.insert(command.argv.end(), verbatim.begin(), verbatim.end());
    // Post-training is pretrain_gpt.py's SFT mode; megatron.args.sft: false leaves it out.
    if (posttrain && !r.Find("megatron.args.sft") && !r.Find("model.sft")) command.argv.push_back("--sft");
  }
  command.env["CUDA_DEVICE_MAX_CONNECTIONS"] = "1";  // Megatron requires it for TP/SP overlap
  return command;
}

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string TomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\u{:04x}", byte);
        else out += c;
    }
  }
  return out + "\"";
}

std::string TomlValue(const Value& value) {
  if (value.IsString()) return TomlString(value.AsString());
  if (value.IsBool()) return value.AsBool() ? "true" : "false";
  if (value.IsDouble() && !std::isfinite(value.AsDouble())) {
    return std::isnan(value.AsDouble()) ? "nan" : value.AsDouble() < 0 ? "-inf" : "inf";
  }
  if (value.IsList()) {
    std::vector<std::string> items;
    for (const Value& item : value.AsList()) items.push_back(TomlValue(item));
    return "[" + Join(items, ", ") + "]";
  }
  return value.ScalarText();
}

// One table: its keys, then its sub-tables as [name.sub].
void EmitToml(const std::string& name, const Value& table, std::string* out) {
  std::string body;
  bool has_tables = false;
  for (const auto& [key, value] : table.AsMap()) {
    if (value.IsMap()) has_tables = true;
    else if (!value.IsNull()) body += key + " = " + TomlValue(value) + "\n";
  }
  if (!body.empty() || !has_tables) *out += "\n[" + name + "]\n" + body;
  for (const auto& [key, value] : table.AsMap()) {
    if (value.IsMap()) EmitToml(name + "." + key, value, out);
  }
}

// The user's torchtitan.toml over ours: null leaves a key out, tables merge.
void MergeToml(Value* into, const Value& over) {
  for (const auto& [key, value] : over.AsMap()) {
    if (value.IsNull()) continue;
    Value* existing = into->Get(key);
    if (value.IsMap() && existing && existing->IsMap()) {
      MergeToml(existing, value);
    } else if (value.IsMap()) {
      Value table = Value::EmptyMap();
      MergeToml(&table, value);
      into->Put(key, table);
    } else {
      into->Put(key, value);
    }
  }
}

// TorchTitan's job config (torchtitan/config/job_config.py at the pinned release).
Result<BackendCommand> TorchTitanCommand(const BackendRequest& inputs) {
  const ExperimentConfig& e = *inputs.experiment;
  const Value& r = e.resolved;
  if (Status status = CheckBackendSubtask(e, inputs.subtask); !status.ok()) return status.error();
  auto extra = CheckedTorchTitanToml(r, e.torchtitan_keys ? *e.torchtitan_keys : TorchTitanKeys::Builtin());
  if (!extra.ok()) return extra.error();
  // Sections in TorchTitan's order; torchtitan.toml adds keys we do not own.
  Value doc = Value::EmptyMap();
  auto set = [&](const std::string& key, Value value) { (void)doc.Set(key, std::move(value)); };
  set("job.dump_folder", Value::String(inputs.experiment_dir + "/torchtitan"));
  set("job.description", Value::String(e.exp_name));
  if (const Value* model = r.Find("model"); model && model->IsMap()) {
    for (const auto& [key, value] : model->AsMap()) {
      if (!value.IsNull()) set("model." + key, value);
    }
  }
  set("optimizer.lr", *r.Find("training.lr"));
  set("lr_scheduler.warmup_steps", *r.Find("training.warmup"));
  // The same arithmetic as the layout check: global = micro x DP x accumulation.
  set("training.local_batch_size", Value::Int(e.parallelism.micro_batch));
  set("training.global_batch_size", Value::Int(e.parallelism.global_batch));
  if (Int(r, "training.seq_len") > 0) set("training.seq_len", *r.Find("training.seq_len"));
  set("training.steps", *r.Find("training.steps"));
  std::string dtype = Text(r, "training.dtype");
  if (dtype == "bf16") set("training.mixed_precision_param", Value::String("bfloat16"));
  if (dtype == "fp32") set("training.mixed_precision_param", Value::String("float32"));
  set("parallelism.data_parallel_shard_degree", Value::Int(-1));
  set("parallelism.tensor_parallel_degree", Value::Int(e.parallelism.tensor));
  set("parallelism.pipeline_parallel_degree", Value::Int(e.parallelism.pipeline));
  set("parallelism.context_parallel_degree", Value::Int(e.parallelism.context));
  set("parallelism.expert_parallel_degree", Value::Int(e.parallelism.expert));
  set("metrics.log_freq", *r.Find("training.log_interval"));
  set("debug.seed", *r.Find("training.seed"));
  std::string checkpoint_dir;
  if (Int(r, "checkpoint.interval") > 0) {
    checkpoint_dir = CheckpointDir(inputs);
    set("checkpoint.enable", Value::Bool(true));
    set("checkpoint.folder", Value::String(checkpoint_dir));
    set("checkpoint.interval", *r.Find("checkpoint.interval"));
    set("checkpoint.keep_latest_k", *r.Find("checkpoint.keep_last"));
  }
  MergeToml(&doc, *extra);
  std::string toml = "# Generated by primus-cli from " + e.file + " for TorchTitan " +
                     TorchTitanKeys::Builtin().release() + "\n";
  for (const auto& [section, table] : doc.AsMap()) EmitToml(section, table, &toml);
  BackendCommand command;
  std::string toml_path = inputs.experiment_dir + "/config/torchtitan.toml";
  command.files[toml_path] = toml;
  command.argv = PythonPrefix(e);
  std::string module = Text(r, inputs.subtask == "posttrain" ? "torchtitan.posttrain_module" : "torchtitan.module");
  command.argv.insert(command.argv.end(), {"-m", module, "--job.config_file", toml_path});
  command.checkpoint_dir = checkpoint_dir;
  return command;
}

// A Primus-format experiment runs through Primus's own CLI, as the public
// Primus launcher runs it in each worker; what followed --config is appended
// verbatim by the caller (BuildBackendCommand's extra arguments).
Result<BackendCommand> PrimusCommand(const BackendRequest& inputs) {
  if (!inputs.primus) {
    return UnavailableError(inputs.experiment->file + " is a Primus-format experiment and no Primus installation was given",
                            "export PRIMUS_PATH=/path/to/Primus");
  }
  const ExperimentConfig& e = *inputs.experiment;
  BackendCommand command;
  command.argv = PythonPrefix(e);
  std::string file = e.file.starts_with("/") ? e.file : JoinPath(CurrentDir(), e.file);
  command.argv.insert(command.argv.end(), {inputs.primus->main_py(), "train", inputs.subtask, "--config", file});
  command.env["PRIMUS_PATH"] = inputs.primus->root;
  return command;
}

}  // namespace

Status CheckBackendSubtask(const ExperimentConfig& experiment, std::string_view subtask) {
  if (subtask != "posttrain" || experiment.backend != "torchtitan") return Status::Ok();
  const Value* module = experiment.resolved.Find("torchtitan.posttrain_module");
  if (module && !module->ScalarText().empty()) return Status::Ok();
  return ConfigError("train posttrain with the torchtitan backend needs torchtitan.posttrain_module: TorchTitan " +
                         TorchTitanKeys::Builtin().release() + " has no post-training entry",
                     "set torchtitan: {posttrain_module: your.module}; it runs as python -m MODULE --job.config_file "
                     "<the generated job TOML>");
}

Result<BackendCommand> BuildBackendCommand(const BackendRequest& inputs) {
  const std::string& backend = inputs.experiment->backend;
  Result<BackendCommand> command = UsageError("unknown backend " + backend);
  if (backend == "torch") command = TorchCommand(inputs);
  else if (backend == "megatron") command = MegatronCommand(inputs);
  else if (backend == "torchtitan") command = TorchTitanCommand(inputs);
  else if (backend == "primus") command = PrimusCommand(inputs);
  else if (backend == "jax") {
    // A JAX script, with JAX's variables (agent/worker_env.h): jax.distributed.initialize() finds the coordinator.
    BackendCommand jax;
    jax.argv = PythonPrefix(*inputs.experiment);
    jax.argv.push_back(Text(inputs.experiment->resolved, "jax.script"));
    for (const Value& arg : inputs.experiment->resolved.Find("jax.args")->AsList()) jax.argv.push_back(arg.ScalarText());
    jax.framework_env = {"jax"};
    command = jax;
  } else if (backend == "command") {
    BackendCommand plain;
    for (const Value& arg : inputs.experiment->resolved.Find("command.argv")->AsList()) plain.argv.push_back(arg.ScalarText());
    command = plain;
  }
  if (!command.ok()) return command;
  if (backend == "megatron") {
    if (Status checked = MegatronTableOf(*inputs.experiment).CheckPassedArguments(inputs.extra_args); !checked.ok()) {
      return checked.error();
    }
  }
  command->argv.insert(command->argv.end(), inputs.extra_args.begin(), inputs.extra_args.end());
  return command;
}

}  // namespace primus::train
