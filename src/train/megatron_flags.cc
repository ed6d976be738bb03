#include "train/megatron_flags.h"
#include "train/pinned_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "train/builtin_tables.h"
#include "util/strings.h"

namespace primus::train {
namespace {

using config::Value;
using Kind = MegatronOption::Kind;

// Dests primus-cli sets from our schema: given again in megatron.args or
// model:, they would bypass the layout check or disagree with it.
struct OwnedMegatronDest {
  std::string_view dest;
  std::string_view key;
};
constexpr OwnedMegatronDest kOwnedMegatronDests[] = {
    {"tensor_model_parallel_size", "parallelism.tensor"},
    {"pipeline_model_parallel_size", "parallelism.pipeline"},
    {"context_parallel_size", "parallelism.context"},
    {"expert_model_parallel_size", "parallelism.expert"},
    {"micro_batch_size", "parallelism.micro_batch"},
    {"global_batch_size", "parallelism.global_batch"},
    {"train_iters", "training.steps"},
    {"train_samples", "training.steps"},
    {"seq_length", "training.seq_len"},
    {"lr", "training.lr"},
    {"lr_warmup_iters", "training.warmup"},
    {"seed", "training.seed"},
    {"log_interval", "training.log_interval"},
    {"bf16", "training.dtype"},
    {"fp16", "training.dtype"},
    {"save", "checkpoint.dir"},
    {"save_interval", "checkpoint.interval"},
    {"load", "checkpoint.resume"},
};

// Settings of Primus's own Megatron modules (module_base, primus_megatron_module,
// primus_turbo, primus_pipeline, zero_bubble, torch_compile) that Megatron-LM
// does not have.
constexpr std::string_view kPrimusOnly[] = {
    "allow_padding_num_layers", "auto_continue_train", "auto_offload_time", "communication_method", "cpu_offload",
    "dataloader_mp_context", "debug_scheduler_table", "decoder_pipeline_manual_split_list",
    "disable_compile_dependencies", "disable_last_saving", "disable_mlflow", "disable_profiler_activity_cpu",
    "disable_tensorboard", "disable_wandb", "dump_pp_data", "enable_1f1b_v", "enable_exactly_numeric_match",
    "enable_optimizer_post_validation", "enable_primus_turbo", "enable_turbo_attention_float8", "enable_zb_runtime",
    "enable_zero_bubble", "file_sink_level", "generate_tracelens_report", "interleave_group_size",
    "mlflow_experiment_name", "mlflow_run_name", "mlflow_tracelens_auto_install",
    "mlflow_tracelens_cleanup_after_upload", "mlflow_tracelens_output_format", "mlflow_tracelens_ranks",
    "mlflow_upload_logs", "mlflow_upload_performance_metrics", "mlflow_upload_tracelens_report",
    "mlflow_upload_traces", "moe_router_force_load_balancing_type", "moe_use_fused_router_with_aux_score",
    "mxfp4_gradient_stochastic_rounding", "no_fp8_weight_transpose_cache", "num_seq_splits", "offload",
    "offload_chunk_num", "offload_ops", "offload_overlap_sr", "offload_time", "patch_moe_overlap",
    "patch_primus_pipeline", "patch_zero_bubble", "pp_algorithm", "pp_cost_b", "pp_cost_f", "pp_cost_w",
    "pp_max_mem", "pp_warmup", "pre_communication_optimization", "profile_memory_iter", "recompute_layer_ids",
    "sink_level", "sink_sliding_window", "sink_window_even_layers_only", "stderr_sink_level", "torch_compile",
    "torch_profiler_record_shapes", "torch_profiler_use_gzip", "torch_profiler_with_stack", "trainable",
    "turbo_deepep_num_cu", "turbo_deepep_use_comm_stream", "turbo_gemm_backend", "turbo_grouped_gemm_backend",
    "turbo_grouped_gemm_without_padding", "turbo_mega_moe_precision", "turbo_sync_free_moe_stage",
    "use_rocm_mem_info", "use_rocm_mem_info_iters", "use_sink_attention", "use_turbo_attention",
    "use_turbo_autotune", "use_turbo_deepep", "use_turbo_fused_act_with_probs", "use_turbo_gemm",
    "use_turbo_grouped_gemm", "use_turbo_mega_moe", "use_turbo_norm_te_linear", "use_turbo_rms_norm",
    "weight_deosc", "weight_deosc_log_freq", "weight_deosc_period", "weight_deosc_ratio", "weight_deosc_start_step",
    "zero_bubble_adaptive_memory_limit_percentile", "zero_bubble_max_pending_backward",
    "zero_bubble_pipeline_timers_end_iter", "zero_bubble_pipeline_timers_start_iter", "zero_bubble_v_schedule",
    "zero_bubble_v_schedule_mem_setup",
};

bool IsPrimusOnly(std::string_view key) {
  return std::find(std::begin(kPrimusOnly), std::end(kPrimusOnly), key) != std::end(kPrimusOnly) ||
         key.find("primus") != std::string_view::npos || key.find("turbo") != std::string_view::npos;
}

std::string FlagName(std::string_view flag) {
  std::string name(flag);
  name.erase(0, name.find_first_not_of('-'));
  return ReplaceAll(name, "-", "_");
}

std::optional<Kind> ParseKind(std::string_view text) {
  if (text == "store_true") return Kind::kStoreTrue;
  if (text == "store_false") return Kind::kStoreFalse;
  if (text == "boolean_optional") return Kind::kBooleanOptional;
  if (text == "value") return Kind::kValue;
  return std::nullopt;
}

bool IsSwitch(Kind kind) { return kind != Kind::kValue; }

}  // namespace

std::string_view OwnedMegatronKey(std::string_view dest) {
  for (const OwnedMegatronDest& owned : kOwnedMegatronDests) {
    if (owned.dest == dest) return owned.key;
  }
  return {};
}

Result<MegatronFlags> MegatronFlags::Parse(std::string_view tsv) {
  auto pinned = ReadPinnedTable(tsv, "Megatron-LM", "the Megatron-LM option table");
  if (!pinned.ok()) return pinned.error();
  MegatronFlags table;
  table.release_ = pinned->release;
  table.commit_ = pinned->commit;
  for (const PinnedTable::Row& row : pinned->rows) {
    const std::vector<std::string>& fields = row.fields;
    auto kind = fields.size() == 5 ? ParseKind(fields[2]) : std::nullopt;
    if (!kind || fields[0].empty() || fields[1].empty()) {
      return ConfigError("the Megatron-LM option table, line " + std::to_string(row.line) +
                           ": expected flags, dest, kind, nargs and type separated by tabs");
    }
    MegatronOption option{Split(fields[0], ','), fields[1], *kind, fields[3], fields[4]};
    size_t index = table.options_.size();
    table.by_dest_[option.dest].push_back(index);
    for (const std::string& flag : option.flags) table.by_flag_.emplace(FlagName(flag), FlagRef{index, flag});
    table.options_.push_back(std::move(option));
  }
  for (const auto& [dest, indexes] : table.by_dest_) table.names_.push_back(dest);
  for (const auto& [name, ref] : table.by_flag_) {
    if (!table.by_dest_.count(name)) table.names_.push_back(name);
  }
  std::sort(table.names_.begin(), table.names_.end());
  return table;
}

const MegatronFlags& MegatronFlags::Builtin() {
  static const MegatronFlags table = [] {
    auto parsed = Parse(BuiltinMegatronFlagsTsvs().back());
    if (!parsed.ok()) {
      std::cerr << "primus-cli: " << parsed.error().message << "\n";
      std::abort();  // the build embedded a broken table
    }
    return std::move(*parsed);
  }();
  return table;
}

std::string MegatronFlags::DestOf(std::string_view key) const {
  std::string name(key);
  if (by_dest_.count(name)) return name;
  if (auto found = by_flag_.find(name); found != by_flag_.end()) return options_[found->second.option].dest;
  return "";
}

Status MegatronFlags::CheckPassedArguments(const std::vector<std::string>& args) const {
  for (const std::string& arg : args) {
    if (!arg.starts_with("--") || arg == "--") continue;
    std::string written = arg.substr(0, arg.find('='));
    std::string name = FlagName(written);
    auto found = by_flag_.find(name);
    if (found == by_flag_.end()) {
      return UsageError("'" + written + "' after the experiment is not a Megatron-LM " + release_ + " option" +
                            DidYouMean(name, names_),
                        "arguments after --config reach Megatron-LM as they are; experiment keys are written "
                        "key=value (model.num_layers=32, megatron.args.KEY=VALUE)");
    }
    const MegatronOption& option = options_[found->second.option];
    if (std::string_view ours = OwnedMegatronKey(option.dest); !ours.empty()) {
      return UsageError("'" + written + "' after the experiment sets what primus-cli sets from " + std::string(ours),
                        "write " + std::string(ours) + "=VALUE instead, so the layout check sees it");
    }
    if (found->second.flag != written) {
      return UsageError("'" + written + "' is not how Megatron-LM spells it: " + found->second.flag,
                        "write " + found->second.flag + (arg.size() > written.size() ? arg.substr(written.size()) : "") +
                            ", or the experiment key model." + option.dest + "=VALUE");
    }
  }
  return Status::Ok();
}

Error MegatronFlags::UnknownKey(std::string_view key, const Value& value, std::string_view path) const {
  const config::Origin& where = value.key_origin();
  std::string name(key);
  if (IsPrimusOnly(name)) {
    return config::ConfigErrorAt(where, std::string(path) + " is a Primus setting, not a Megatron-LM option",
                                 "Primus settings belong in a Primus-format experiment (modules:), which runs through "
                                 "Primus; this file runs Megatron-LM " + release_ + " directly");
  }
  std::string spelled = FlagName(name);
  if (spelled != name && !DestOf(spelled).empty()) {
    return config::ConfigErrorAt(where, std::string(path) + " is written as a flag", "write '" + spelled + "'");
  }
  return config::ConfigErrorAt(where, std::string(path) + " is not a Megatron-LM " + release_ + " option" +
                                          DidYouMean(name, names_),
                               "keys are the dests of megatron/training/arguments.py (num_layers for --num-layers); "
                               "an option of a fork or of another release: set megatron.release, or pass it as "
                               "written in megatron.verbatim_args: [--its-flag]");
}

Result<std::vector<std::string>> MegatronFlags::ValueArguments(const MegatronOption& option, const std::string& flag,
                                                               const Value& value, std::string_view path) const {
  if (option.type == "bool" && !option.TakesList() && value.IsBool()) {
    // type=bool (--onnx-safe): argparse makes any non-empty text True, so
    // true is "True" and false leaves the option out (its default, None).
    if (value.AsBool()) return std::vector<std::string>{flag, "True"};
    return std::vector<std::string>{};
  }
  auto item_text = [&](const Value& item) -> Result<std::string> {
    std::string where = std::string(path) + ": " + flag;
    if (item.IsMap() || item.IsList()) {
      return config::ConfigErrorAt(item.origin(), where + " takes plain values, not " + item.DescribeForMessage());
    }
    if (item.IsNull()) return config::ConfigErrorAt(item.origin(), where + " has an empty value in its list");
    if (item.IsBool()) {
      return config::ConfigErrorAt(item.origin(), where + " takes a value, not " + item.ScalarText(),
                                   "write the text in quotes (\"" + item.ScalarText() + "\") to pass it as it is");
    }
    std::string text = item.ScalarText();
    if (item.IsDouble() && !std::isfinite(item.AsDouble())) text = fmt::format("{}", item.AsDouble());  // inf, not .inf
    if (text.empty()) {
      return config::ConfigErrorAt(item.origin(), where + " has an empty value",
                                   "give a value, or null to leave " + flag + " out");
    }
    if (option.type == "int" && !ParseInt(text)) {
      return config::ConfigErrorAt(item.origin(), where + " takes an integer, not '" + text + "'");
    }
    if (option.type == "float" && !ParseDouble(text)) {
      return config::ConfigErrorAt(item.origin(), where + " takes a number, not '" + text + "'");
    }
    return text;
  };
  std::vector<std::string> argv = {flag};
  if (value.IsList()) {
    if (!option.TakesList()) {
      return config::ConfigErrorAt(value.origin(), std::string(path) + ": " + flag + " takes one value, not a list");
    }
    const Value::List& items = value.AsList();
    auto count = ParseInt(option.nargs);
    if (count && static_cast<int64_t>(items.size()) != *count) {
      return config::ConfigErrorAt(value.origin(), std::string(path) + ": " + flag + " takes " + option.nargs +
                                                       " values, not " + std::to_string(items.size()));
    }
    if (option.nargs == "+" && items.empty()) {
      return config::ConfigErrorAt(value.origin(), std::string(path) + ": " + flag + " takes at least one value",
                                   "give values, or null to leave " + flag + " out");
    }
    for (const Value& item : items) {
      auto text = item_text(item);
      if (!text.ok()) return text.error();
      argv.push_back(*text);
    }
    return argv;
  }
  if (auto count = ParseInt(option.nargs); count && *count != 1) {
    return config::ConfigErrorAt(value.origin(), std::string(path) + ": " + flag + " takes a list of " + option.nargs +
                                                     " values");
  }
  auto text = item_text(value);
  if (!text.ok()) return text.error();
  argv.push_back(*text);
  return argv;
}

Result<std::vector<std::string>> MegatronFlags::Arguments(std::string_view key, const Value& value,
                                                          std::string_view path) const {
  std::string name(key);
  std::vector<const MegatronOption*> options;
  const FlagRef* spelled = nullptr;  // the key names one flag rather than a dest
  if (auto found = by_dest_.find(name); found != by_dest_.end()) {
    for (size_t index : found->second) options.push_back(&options_[index]);
  } else if (auto flag = by_flag_.find(name); flag != by_flag_.end()) {
    spelled = &flag->second;
    options.push_back(&options_[spelled->option]);
  } else {
    return UnknownKey(key, value, path);
  }
  std::string dest = options.front()->dest;
  if (std::string_view ours = OwnedMegatronKey(dest); !ours.empty()) {
    return config::ConfigErrorAt(value.key_origin(),
                                 std::string(path) + " is set by primus-cli from " + std::string(ours),
                                 "use " + std::string(ours) + " (it is part of the layout check)");
  }
  if (value.IsNull()) return std::vector<std::string>{};

  auto value_option = std::find_if(options.begin(), options.end(), [](const MegatronOption* o) { return !IsSwitch(o->kind); });
  if (value_option != options.end()) {
    const MegatronOption& option = **value_option;
    return ValueArguments(option, spelled ? spelled->flag : option.flags.front(), value, path);
  }
  // A switch: true or false, nothing else.
  if (!value.IsBool()) {
    std::vector<std::string> flags;
    for (const MegatronOption* option : options) flags.insert(flags.end(), option->flags.begin(), option->flags.end());
    return config::ConfigErrorAt(value.origin(), std::string(path) + ": " + Join(flags, "/") +
                                                     " is a switch: true or false, not " + value.DescribeForMessage());
  }
  bool on = value.AsBool();
  if (spelled) {  // the flag itself: true gives it, false leaves it out
    if (on) return std::vector<std::string>{spelled->flag};
    return std::vector<std::string>{};
  }
  for (const MegatronOption* option : options) {
    if (option->kind == Kind::kStoreTrue && on) return std::vector<std::string>{option->flags.front()};
    if (option->kind == Kind::kStoreFalse && !on) return std::vector<std::string>{option->flags.front()};
    if (option->kind == Kind::kBooleanOptional) {
      // argparse lists --x then --no-x for each of the option's names.
      return std::vector<std::string>{option->flags.at(on ? 0 : 1)};
    }
  }
  return std::vector<std::string>{};  // Megatron's default already is what was asked
}

namespace {

// The Megatron keys of an experiment, in command-line order: model: (but
// name, ours) then megatron.args.
struct KeyRef {
  std::string key;
  std::string path;
  const Value* value;
};

Result<std::vector<KeyRef>> MegatronKeys(const Value& resolved) {
  std::vector<KeyRef> keys;
  for (const char* section : {"model", "megatron.args"}) {
    const Value* map = resolved.Find(section);
    if (!map || map->IsNull()) continue;
    if (!map->IsMap()) {
      return config::ConfigErrorAt(map->origin(),
                                   std::string(section) + ": expected a map of Megatron-LM options, got " +
                                       map->DescribeForMessage(),
                                   "write one 'dest: value' per line, e.g. num_layers: 32");
    }
    for (const auto& [key, value] : map->AsMap()) {
      if (std::string_view(section) == "model" && key == "name") continue;
      keys.push_back({key, std::string(section) + "." + key, &value});
    }
  }
  return keys;
}

}  // namespace

Status CheckMegatronKeys(const Value& resolved, const MegatronFlags& table) {
  auto arguments = MegatronKeyArguments(resolved, table);
  if (!arguments.ok()) return arguments.error();
  // Pairs Megatron's validate_args refuses, found here rather than on every rank.
  for (const char* section : {"model", "megatron.args"}) {
    const Value* map = resolved.Find(section);
    if (!map || !map->IsMap()) continue;
    for (const auto& [key, value] : map->AsMap()) {
      if (value.IsNull() || table.DestOf(key) != "step_batch_size_schedule") continue;
      return config::ConfigErrorAt(value.key_origin(),
                                   std::string(section) + "." + key +
                                       ": Megatron-LM refuses --step-batch-size-schedule beside --global-batch-size, "
                                       "which primus-cli always gives (from parallelism.global_batch or the layout)",
                                   "leave it out; for a batch size that grows, use megatron.args.rampup_batch_size "
                                   "[start, increment, samples]");
    }
  }
  const Value* verbatim = resolved.Find("megatron.verbatim_args");
  if (verbatim && !verbatim->IsNull()) {
    bool strings = verbatim->IsList() && std::all_of(verbatim->AsList().begin(), verbatim->AsList().end(),
                                                     [](const Value& item) { return item.IsScalar() && !item.IsNull(); });
    if (!strings) {
      return config::ConfigErrorAt(verbatim->origin(), "megatron.verbatim_args: expected a list of arguments",
                                   "e.g. megatron.verbatim_args: [--batch-p2p-communication]");
    }
  }
  return Status::Ok();
}

std::vector<std::string> MegatronVerbatimArguments(const Value& resolved) {
  std::vector<std::string> argv;
  const Value* verbatim = resolved.Find("megatron.verbatim_args");
  if (!verbatim || !verbatim->IsList()) return argv;
  for (const Value& item : verbatim->AsList()) argv.push_back(item.ScalarText());
  return argv;
}

Result<std::vector<std::string>> MegatronKeyArguments(const Value& resolved, const MegatronFlags& table) {
  auto keys = MegatronKeys(resolved);
  if (!keys.ok()) return keys.error();
  std::unordered_map<std::string, const KeyRef*> seen;  // dest -> first key
  std::vector<std::string> argv;
  for (const KeyRef& ref : *keys) {
    auto arguments = table.Arguments(ref.key, *ref.value, ref.path);
    if (!arguments.ok()) return arguments.error();
    std::string dest = table.DestOf(ref.key);
    if (auto [first, inserted] = seen.emplace(dest, &ref); !inserted) {
      return config::ConfigErrorAt(ref.value->key_origin(),
                                   ref.path + " sets Megatron-LM's " + dest + ", which " + first->second->path +
                                       " (" + first->second->value->key_origin().Describe() + ") already sets",
                                   "keep one of them");
    }
    argv.insert(argv.end(), arguments->begin(), arguments->end());
  }
  return argv;
}

}  // namespace primus::train
