#include "train/backends.h"

#include "config/scalar_types.h"
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

std::string CheckpointDir(const BackendInputs& inputs) {
  std::string dir = Text(inputs.experiment->resolved, "checkpoint.dir");
  return dir.empty() ? inputs.experiment_dir + "/checkpoints" : dir;
}

std::string Resume(const BackendInputs& inputs) {
  return inputs.resume.empty() ? Text(inputs.experiment->resolved, "checkpoint.resume") : inputs.resume;
}

void Flag(std::vector<std::string>* argv, const std::string& flag, const std::string& value) {
  argv->push_back(flag);
  argv->push_back(value);
}

// The torch backend: the documented mapping of examples/gpt/README.md.
Result<BackendCommand> TorchCommand(const BackendInputs& inputs) {
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
    }
    command.metrics_file = inputs.experiment_dir + "/metrics.jsonl";
    Flag(&command.argv, "--metrics-file", command.metrics_file);
  }
  for (const Value& arg : r.Find("torch.args")->AsList()) command.argv.push_back(arg.ScalarText());
  return command;
}

// Megatron-LM's pretrain_gpt.py flags (megatron/training/arguments.py).
Result<BackendCommand> MegatronCommand(const BackendInputs& inputs) {
  const ExperimentConfig& e = *inputs.experiment;
  const Value& r = e.resolved;
  std::string path = Text(r, "megatron.path");
  if (path.empty() && inputs.environment.count("MEGATRON_PATH")) path = inputs.environment.at("MEGATRON_PATH");
  if (path.empty()) {
    return EnvironmentError("the megatron backend needs a Megatron-LM checkout",
                            "set megatron.path in the experiment, or export MEGATRON_PATH=/path/to/Megatron-LM");
  }
  BackendCommand command;
  command.argv = PythonPrefix(e);
  command.argv.push_back(JoinPath(path, Text(r, "megatron.script")));
  Flag(&command.argv, "--tensor-model-parallel-size", std::to_string(e.parallelism.tensor));
  Flag(&command.argv, "--pipeline-model-parallel-size", std::to_string(e.parallelism.pipeline));
  Flag(&command.argv, "--context-parallel-size", std::to_string(e.parallelism.context));
  Flag(&command.argv, "--expert-model-parallel-size", std::to_string(e.parallelism.expert));
  Flag(&command.argv, "--micro-batch-size", std::to_string(e.parallelism.micro_batch));
  Flag(&command.argv, "--global-batch-size", std::to_string(e.parallelism.global_batch));
  if (Int(r, "training.seq_len") > 0) {
    Flag(&command.argv, "--seq-length", Text(r, "training.seq_len"));
    Flag(&command.argv, "--max-position-embeddings", Text(r, "training.seq_len"));
  }
  Flag(&command.argv, "--train-iters", Text(r, "training.steps"));
  Flag(&command.argv, "--lr", Text(r, "training.lr"));
  Flag(&command.argv, "--lr-warmup-iters", Text(r, "training.warmup"));
  Flag(&command.argv, "--seed", Text(r, "training.seed"));
  Flag(&command.argv, "--log-interval", Text(r, "training.log_interval"));
  std::string dtype = Text(r, "training.dtype");
  if (dtype == "bf16") command.argv.push_back("--bf16");
  if (dtype == "fp16") command.argv.push_back("--fp16");
  // model.<key> -> --<key-with-dashes> (num_layers -> --num-layers); name is ours.
  if (const Value* model = r.Find("model"); model && model->IsMap()) {
    for (const auto& [key, value] : model->AsMap()) {
      if (key == "name" || !value.IsScalar()) continue;
      if (value.IsBool()) {
        if (value.AsBool()) command.argv.push_back("--" + ReplaceAll(key, "_", "-"));
        continue;
      }
      Flag(&command.argv, "--" + ReplaceAll(key, "_", "-"), value.ScalarText());
    }
  }
  if (Int(r, "checkpoint.interval") > 0) {
    command.checkpoint_dir = CheckpointDir(inputs);
    Flag(&command.argv, "--save", command.checkpoint_dir);
    Flag(&command.argv, "--save-interval", Text(r, "checkpoint.interval"));
    if (Resume(inputs) != "none") {
      Flag(&command.argv, "--load", Resume(inputs) == "auto" ? command.checkpoint_dir : Resume(inputs));
    }
  }
  // megatron.args: --key value; true -> the bare switch, false -> omitted.
  for (const auto& [key, value] : r.Find("megatron.args")->AsMap()) {
    std::string flag = "--" + ReplaceAll(key, "_", "-");
    std::string text = value.ScalarText();
    if (text == "true") command.argv.push_back(flag);
    else if (text != "false") Flag(&command.argv, flag, text);
  }
  command.env["CUDA_DEVICE_MAX_CONNECTIONS"] = "1";  // Megatron requires it for TP/SP overlap
  return command;
}

void TomlValue(std::string* out, const std::string& key, const Value& value) {
  if (value.IsString()) *out += key + " = \"" + ReplaceAll(ReplaceAll(value.AsString(), "\\", "\\\\"), "\"", "\\\"") + "\"\n";
  else if (value.IsBool()) *out += key + " = " + (value.AsBool() ? "true" : "false") + "\n";
  else if (value.IsScalar()) *out += key + " = " + value.ScalarText() + "\n";
  else if (value.IsList()) {
    std::vector<std::string> items;
    for (const Value& item : value.AsList()) items.push_back(item.IsString() ? "\"" + item.AsString() + "\"" : item.ScalarText());
    *out += key + " = [" + Join(items, ", ") + "]\n";
  }
}

// TorchTitan's job config (torchtitan/config/job_config.py, 2025 layout).
Result<BackendCommand> TorchTitanCommand(const BackendInputs& inputs) {
  const ExperimentConfig& e = *inputs.experiment;
  const Value& r = e.resolved;
  // Sections in TorchTitan's order; torchtitan.toml entries override ours.
  std::vector<std::pair<std::string, Value>> sections;
  auto set = [&](const std::string& section, const std::string& key, Value value) {
    for (auto& [name, table] : sections) {
      if (name == section) {
        table.Put(key, std::move(value));
        return;
      }
    }
    Value table = Value::EmptyMap();
    table.Put(key, std::move(value));
    sections.emplace_back(section, std::move(table));
  };
  set("job", "dump_folder", Value::String(inputs.experiment_dir + "/torchtitan"));
  set("job", "description", Value::String(e.exp_name));
  if (std::string name = Text(r, "model.name"); !name.empty()) set("model", "name", Value::String(name));
  if (std::string flavor = Text(r, "model.flavor"); !flavor.empty()) set("model", "flavor", Value::String(flavor));
  set("optimizer", "lr", *r.Find("training.lr"));
  set("lr_scheduler", "warmup_steps", *r.Find("training.warmup"));
  set("training", "local_batch_size", Value::Int(e.parallelism.micro_batch));
  set("training", "global_batch_size", Value::Int(e.parallelism.global_batch));
  if (Int(r, "training.seq_len") > 0) set("training", "seq_len", *r.Find("training.seq_len"));
  set("training", "steps", *r.Find("training.steps"));
  if (Text(r, "training.dtype") == "bf16") set("training", "mixed_precision_param", Value::String("bfloat16"));
  set("parallelism", "data_parallel_shard_degree", Value::Int(-1));
  set("parallelism", "tensor_parallel_degree", Value::Int(e.parallelism.tensor));
  set("parallelism", "pipeline_parallel_degree", Value::Int(e.parallelism.pipeline));
  set("parallelism", "context_parallel_degree", Value::Int(e.parallelism.context));
  set("parallelism", "expert_parallel_degree", Value::Int(e.parallelism.expert));
  set("metrics", "log_freq", *r.Find("training.log_interval"));
  set("debug", "seed", *r.Find("training.seed"));
  std::string checkpoint_dir;
  if (Int(r, "checkpoint.interval") > 0) {
    checkpoint_dir = CheckpointDir(inputs);
    set("checkpoint", "enable", Value::Bool(true));
    set("checkpoint", "folder", Value::String(checkpoint_dir));
    set("checkpoint", "interval", *r.Find("checkpoint.interval"));
    set("checkpoint", "keep_latest_k", *r.Find("checkpoint.keep_last"));
  }
  if (const Value* extra = r.Find("torchtitan.toml"); extra && extra->IsMap()) {
    for (const auto& [section, table] : extra->AsMap()) {
      if (!table.IsMap()) {
        return config::ConfigErrorAt(table.origin(), "torchtitan.toml." + section + " must be a table of keys",
                                     "write torchtitan: {toml: {training: {compile: true}}}");
      }
      for (const auto& [key, value] : table.AsMap()) set(section, key, value);
    }
  }
  std::string toml = "# Generated by primus-cli from " + e.file + "\n";
  for (const auto& [section, table] : sections) {
    toml += "\n[" + section + "]\n";
    for (const auto& [key, value] : table.AsMap()) TomlValue(&toml, key, value);
  }
  BackendCommand command;
  std::string toml_path = inputs.experiment_dir + "/config/torchtitan.toml";
  command.files[toml_path] = toml;
  command.argv = PythonPrefix(e);
  command.argv.insert(command.argv.end(), {"-m", Text(r, "torchtitan.module"), "--job.config_file", toml_path});
  command.checkpoint_dir = checkpoint_dir;
  return command;
}

// A Primus-format experiment runs through Primus's own CLI, as the public
// Primus launcher runs it in each worker; what followed --config is appended
// verbatim by the caller (BuildBackendCommand's extra arguments).
Result<BackendCommand> PrimusCommand(const BackendInputs& inputs) {
  if (!inputs.primus) {
    return EnvironmentError(inputs.experiment->file + " is a Primus-format experiment and no Primus installation was given",
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

Result<BackendCommand> BuildBackendCommand(const BackendInputs& inputs) {
  const std::string& backend = inputs.experiment->backend;
  Result<BackendCommand> command = UsageError("unknown backend " + backend);
  if (backend == "torch") command = TorchCommand(inputs);
  else if (backend == "megatron") command = MegatronCommand(inputs);
  else if (backend == "torchtitan") command = TorchTitanCommand(inputs);
  else if (backend == "primus") command = PrimusCommand(inputs);
  else if (backend == "command") {
    BackendCommand plain;
    for (const Value& arg : inputs.experiment->resolved.Find("command.argv")->AsList()) plain.argv.push_back(arg.ScalarText());
    command = plain;
  }
  if (!command.ok()) return command;
  command->argv.insert(command->argv.end(), inputs.extra_args.begin(), inputs.extra_args.end());
  return command;
}

}  // namespace primus::train
