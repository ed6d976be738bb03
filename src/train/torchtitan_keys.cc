#include "train/torchtitan_keys.h"
#include "train/pinned_table.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include "hooks/hook_runner.h"
#include "io/subprocess.h"
#include "train/builtin_tables.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::train {
namespace {

using config::Value;

struct OwnedTorchTitanEntry {
  std::string_view key;
  std::string_view ours;
};
// What TorchTitanCommand writes from our schema (docs/experiment.md).
constexpr OwnedTorchTitanEntry kOwnedTorchTitanKeys[] = {
    {"job.dump_folder", "workspace and exp_name (the experiment directory)"},
    {"model.name", "model.name"},
    {"model.flavor", "model.flavor"},
    {"optimizer.lr", "training.lr"},
    {"lr_scheduler.warmup_steps", "training.warmup"},
    {"training.local_batch_size", "parallelism.micro_batch"},
    {"training.global_batch_size", "parallelism.global_batch"},
    {"training.seq_len", "training.seq_len"},
    {"training.steps", "training.steps"},
    {"parallelism.data_parallel_shard_degree",
     "parallelism.tensor, .pipeline and .context (the rest of the world size is data-parallel)"},
    {"parallelism.tensor_parallel_degree", "parallelism.tensor"},
    {"parallelism.pipeline_parallel_degree", "parallelism.pipeline"},
    {"parallelism.context_parallel_degree", "parallelism.context"},
    {"parallelism.expert_parallel_degree", "parallelism.expert"},
    {"metrics.log_freq", "training.log_interval"},
    {"debug.seed", "training.seed"},
    {"checkpoint.enable", "checkpoint.interval (checkpoints are on when it is above 0)"},
    {"checkpoint.folder", "checkpoint.dir"},
    {"checkpoint.interval", "checkpoint.interval"},
    {"checkpoint.keep_latest_k", "checkpoint.keep_last"},
};

std::string Parent(std::string_view key) {
  size_t dot = key.rfind('.');
  return dot == std::string_view::npos ? "" : std::string(key.substr(0, dot));
}

// "Literal['a', 'b'] | None" -> ("Literal['a', 'b']"); "int | None" -> "int".
std::string WithoutNone(std::string type) {
  for (std::string_view suffix : {" | None", "|None"}) {
    if (type.ends_with(suffix)) type.resize(type.size() - suffix.size());
  }
  return type;
}

// The quoted choices of "Literal['a', 'b']".
std::vector<std::string> LiteralChoices(const std::string& type) {
  std::vector<std::string> choices;
  size_t at = type.find('[');
  while (at != std::string::npos) {
    size_t open = type.find_first_of("'\"", at + 1);
    if (open == std::string::npos) break;
    size_t close = type.find(type[open], open + 1);
    if (close == std::string::npos) break;
    choices.push_back(type.substr(open + 1, close - open - 1));
    at = close;
  }
  return choices;
}

bool AsText(Value* value) {
  if (value->IsString()) return true;
  if (!value->IsNumber()) return false;
  *value = Value::String(value->ScalarText(), value->origin());
  return true;
}

}  // namespace

std::string_view OwnedTorchTitanKey(std::string_view key) {
  for (const OwnedTorchTitanEntry& owned : kOwnedTorchTitanKeys) {
    if (owned.key == key) return owned.ours;
  }
  return {};
}

Result<TorchTitanKeys> TorchTitanKeys::Parse(std::string_view tsv) {
  auto pinned = ReadPinnedTable(tsv, "TorchTitan", "the TorchTitan key table");
  if (!pinned.ok()) return pinned.error();
  TorchTitanKeys table;
  table.release_ = pinned->release;
  table.commit_ = pinned->commit;
  for (const PinnedTable::Row& row : pinned->rows) {
    const std::vector<std::string>& fields = row.fields;
    if (fields.size() != 2 || fields[0].find('.') == std::string::npos) {
      return ConfigError("the TorchTitan key table, line " + std::to_string(row.line) +
                         ": expected section.key and its type separated by a tab");
    }
    table.keys_.push_back(fields[0]);
    table.types_[fields[0]] = fields[1];
    for (std::string parent = Parent(fields[0]); !parent.empty(); parent = Parent(parent)) table.tables_[parent] = true;
  }
  return table;
}

const TorchTitanKeys& TorchTitanKeys::Builtin() {
  static const TorchTitanKeys table = [] {
    auto parsed = Parse(BuiltinTorchTitanKeysTsv());
    if (!parsed.ok()) {
      std::cerr << "primus-cli: " << parsed.error().message << "\n";
      std::abort();  // the build embedded a broken table
    }
    return std::move(*parsed);
  }();
  return table;
}

const std::string* TorchTitanKeys::TypeOf(std::string_view key) const {
  auto found = types_.find(std::string(key));
  return found == types_.end() ? nullptr : &found->second;
}

bool TorchTitanKeys::IsTable(std::string_view path) const { return tables_.count(std::string(path)) > 0; }

Status TorchTitanKeys::CheckLeaf(const std::string& annotation, Value* value, std::string_view path) const {
  if (value->IsNull()) return Status::Ok();  // left out
  std::string type = WithoutNone(annotation);
  auto wrong = [&](std::string_view expected) -> Status {
    return config::ConfigErrorAt(value->origin(), std::string(path) + ": expected " + std::string(expected) + ", got " +
                                                      value->DescribeForMessage(),
                                 "TorchTitan " + release_ + " declares it as " + annotation);
  };
  if (value->IsMap()) return wrong("a value");
  if (type == "int") return value->IsInt() ? Status::Ok() : wrong("an integer");
  if (type == "float" || type == "float | int" || type == "int | float") {
    return value->IsNumber() ? Status::Ok() : wrong("a number");
  }
  if (type == "bool") return value->IsBool() ? Status::Ok() : wrong("true or false");
  if (type == "str") return AsText(value) ? Status::Ok() : wrong("a string");
  if (type.starts_with("Literal[")) {
    std::vector<std::string> choices = LiteralChoices(type);
    if (!value->IsString() || std::find(choices.begin(), choices.end(), value->AsString()) == choices.end()) {
      std::string text = value->ScalarText();
      return config::ConfigErrorAt(value->origin(),
                                   std::string(path) + ": '" + text + "' is not one of " + Join(choices, ", ") +
                                       DidYouMean(text, choices));
    }
    return Status::Ok();
  }
  if (type.starts_with("list[")) {
    if (value->IsString() && type.ends_with("| str")) return Status::Ok();
    if (!value->IsList()) return wrong("a list");
    if (type == "list[str]" || type == "list[str] | str") {
      for (Value& item : value->AsList()) {
        if (!AsText(&item)) {
          return config::ConfigErrorAt(item.origin(), std::string(path) + ": expected strings in the list, got " +
                                                          item.DescribeForMessage());
        }
      }
    }
    return Status::Ok();
  }
  return Status::Ok();  // a type we do not check (TorchTitan's own parser will)
}

Status TorchTitanKeys::Check(std::string_view key, Value* value, std::string_view path) const {
  std::string name(key);
  if (IsTable(name)) {
    if (value->IsNull()) return Status::Ok();
    if (!value->IsMap()) {
      std::vector<std::string> children;
      for (const std::string& candidate : keys_) {
        if (candidate.starts_with(name + ".")) children.push_back(candidate.substr(name.size() + 1));
      }
      return config::ConfigErrorAt(value->origin(),
                                   std::string(path) + " is a table of TorchTitan settings, not " +
                                       value->DescribeForMessage(),
                                   "write " + std::string(path) + ": {" + Split(children.front(), '.').front() +
                                       ": ...}; its keys: " + Join(children, ", "));
    }
    for (auto& [child, item] : value->AsMap()) {
      if (Status status = Check(name + "." + child, &item, std::string(path) + "." + child); !status.ok()) return status;
    }
    return Status::Ok();
  }
  const std::string* type = TypeOf(name);
  if (!type && pass_unknown_) return Status::Ok();  // a custom config module's key: TorchTitan checks it
  if (!type) {
    std::string parent = Parent(name);
    std::vector<std::string> candidates;
    for (const std::string& candidate : keys_) {
      if (parent.empty() || candidate.starts_with(parent + ".")) candidates.push_back(candidate);
    }
    std::string prefix = std::string(path).substr(0, path.size() - name.size());  // "torchtitan.toml."
    std::string suggestion;
    if (parent.empty()) {
      std::vector<std::string> sections;
      for (const std::string& candidate : keys_) {
        std::string section = Split(candidate, '.').front();
        if (std::find(sections.begin(), sections.end(), section) == sections.end()) sections.push_back(section);
      }
      auto match = ClosestMatch(name, sections);
      suggestion = match ? " (did you mean '" + prefix + *match + "'?)" : "";
      return config::ConfigErrorAt(value->key_origin(),
                                   std::string(path) + " is not a TorchTitan " + release_ + " section" + suggestion,
                                   "the sections are: " + Join(sections, ", "));
    }
    if (auto match = ClosestMatch(name, candidates)) suggestion = " (did you mean '" + prefix + *match + "'?)";
    std::vector<std::string> siblings;
    for (const std::string& candidate : candidates) siblings.push_back(candidate.substr(parent.size() + 1));
    return config::ConfigErrorAt(value->key_origin(),
                                 std::string(path) + " is not a TorchTitan " + release_ + " setting" + suggestion,
                                 "the keys of [" + parent + "] are: " + Join(siblings, ", "));
  }
  return CheckLeaf(*type, value, path);
}

TorchTitanKeys TorchTitanKeys::MergedWith(const TorchTitanKeys& custom) const {
  TorchTitanKeys merged = *this;
  for (const std::string& key : custom.keys_) {
    if (!merged.types_.count(key)) merged.keys_.push_back(key);
    merged.types_[key] = custom.types_.at(key);
  }
  for (const auto& [table, yes] : custom.tables_) merged.tables_[table] = yes;
  return merged;
}

TorchTitanKeys TorchTitanKeys::PassingUnknownKeys() const {
  TorchTitanKeys lenient = *this;
  lenient.pass_unknown_ = true;
  return lenient;
}

std::vector<std::string> TorchTitanKeys::UnknownKeys(const Value& toml) const {
  std::vector<std::string> unknown;
  if (!toml.IsMap()) return unknown;
  std::vector<std::pair<std::string, const Value*>> stack;
  for (const auto& [section, value] : toml.AsMap()) stack.emplace_back(section, &value);
  while (!stack.empty()) {
    auto [key, value] = stack.back();
    stack.pop_back();
    if (TypeOf(key)) continue;
    if (value->IsMap() && (IsTable(key) || !Parent(key).empty() || !TypeOf(key))) {
      for (const auto& [child, item] : value->AsMap()) stack.emplace_back(key + "." + child, &item);
      continue;
    }
    unknown.push_back(key);
  }
  std::sort(unknown.begin(), unknown.end());
  return unknown;
}

Result<Value> CheckedTorchTitanToml(const Value& resolved, const TorchTitanKeys& table) {
  const Value* toml = resolved.Find("torchtitan.toml");
  if (!toml || toml->IsNull()) return Value::EmptyMap();
  Value checked = *toml;
  if (!checked.IsMap()) {
    return config::ConfigErrorAt(checked.origin(),
                                 "torchtitan.toml: expected a map of TorchTitan sections, got " + checked.DescribeForMessage(),
                                 "write torchtitan: {toml: {compile: {enable: true}}}");
  }
  for (auto& [section, value] : checked.AsMap()) {
    std::string path = "torchtitan.toml." + section;
    if (Status status = table.Check(section, &value, path); !status.ok()) return status.error();
  }
  // Keys written from our schema cannot be given here (checked after the
  // names, so that a typo gets its suggestion first).
  std::vector<std::pair<std::string, const Value*>> stack;
  for (const auto& [section, value] : checked.AsMap()) stack.emplace_back(section, &value);
  while (!stack.empty()) {
    auto [key, value] = stack.back();
    stack.pop_back();
    if (value->IsMap() && table.IsTable(key)) {
      for (const auto& [child, item] : value->AsMap()) stack.emplace_back(key + "." + child, &item);
      continue;
    }
    if (std::string_view ours = OwnedTorchTitanKey(key); !ours.empty() && !value->IsNull()) {
      return config::ConfigErrorAt(value->key_origin(),
                                   "torchtitan.toml." + key + " is written by primus-cli from the experiment's own keys",
                                   "use " + std::string(ours));
    }
  }
  return checked;
}

Status CheckTorchTitanKeys(const Value& resolved, const TorchTitanKeys& table) {
  if (const Value* model = resolved.Find("model"); model && !model->IsNull()) {
    if (!model->IsMap()) {
      return config::ConfigErrorAt(model->origin(), "model: expected a map ({name: llama3, flavor: 8B}), got " +
                                                        model->DescribeForMessage());
    }
    for (const auto& [key, value] : model->AsMap()) {
      Value copy = value;
      if (Status status = table.Check("model." + key, &copy, "model." + key); !status.ok()) return status;
      if (key == "name" && copy.IsString()) {
        const std::string& name = copy.AsString();
        for (std::string_view suffix : {".yaml", ".yml", ".toml"}) {
          if (name.ends_with(suffix)) {
            return config::ConfigErrorAt(
                copy.origin(), "model.name '" + name + "' is a file; TorchTitan takes a model name and a flavor",
                "write model: {name: llama3, flavor: 8B} (TorchTitan's names); a model file belongs in a "
                "Primus-format experiment (modules:), which runs through Primus");
          }
        }
      }
    }
  }
  auto toml = CheckedTorchTitanToml(resolved, table);
  return toml.ok() ? Status::Ok() : Status(toml.error());
}

Result<TorchTitanTable> ChooseTorchTitanKeys(const TorchTitanTableRequest& request) {
  const TorchTitanKeys& builtin = TorchTitanKeys::Builtin();
  TorchTitanTable chosen;
  const Value* module = request.resolved->Find("torchtitan.toml.job.custom_config_module");
  if (!module || module->IsNull() || !module->IsScalar() || module->ScalarText().empty()) {
    chosen.keys = std::shared_ptr<const TorchTitanKeys>(std::shared_ptr<const TorchTitanKeys>{}, &builtin);
    chosen.source = "TorchTitan " + builtin.release() + " (compiled in)";
    return chosen;
  }
  std::string name = module->ScalarText();
  bool dotted = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
  if (!dotted || name.front() == '.' || name.back() == '.') {
    return config::ConfigErrorAt(module->origin(),
                                 "torchtitan.toml.job.custom_config_module '" + name + "' is not a module name",
                                 "write a dotted Python module, e.g. torchtitan.models.flux.job_config");
  }
  std::vector<std::string> roots;
  if (const Value* path = request.resolved->Find("torchtitan.path"); path && path->IsScalar() && !path->ScalarText().empty()) {
    roots.push_back(path->ScalarText());
  }
  if (auto env = Lookup(request.environment, "TORCHTITAN_PATH"); env && !env->empty()) roots.push_back(*env);
  roots.push_back(CurrentDir());
  std::string reader = request.reader.empty() ? hooks::PythonApiFile("torchtitan_config_keys.py") : request.reader;
  std::string why;
  if (!reader.empty() && PathExists(reader)) {
    std::vector<std::string> argv = {request.interpreter, reader, "--module", name};
    for (const std::string& root : roots) argv.insert(argv.end(), {"--root", root});
    auto run = RunCommand(argv, {.timeout_s = 30});
    if (run.ok() && run->exit_code == 0) {
      auto custom = TorchTitanKeys::Parse(run->out);
      if (custom.ok()) {
        chosen.keys = std::make_shared<const TorchTitanKeys>(builtin.MergedWith(*custom));
        chosen.source = "TorchTitan " + builtin.release() + " (compiled in) with the " +
                        std::to_string(custom->keys().size()) + " keys of " + name;
        return chosen;
      }
      why = custom.error().message;
    } else {
      why = run.ok() ? std::string(Trim(run->Tail(1))) : run.error().message;
    }
  } else {
    why = "python/torchtitan_config_keys.py is not beside primus-cli";
  }
  chosen.keys = std::make_shared<const TorchTitanKeys>(builtin.PassingUnknownKeys());
  chosen.source = "TorchTitan " + builtin.release() + " (compiled in); keys it does not know pass unchecked";
  const Value* toml = request.resolved->Find("torchtitan.toml");
  std::vector<std::string> passed = toml ? builtin.UnknownKeys(*toml) : std::vector<std::string>{};
  if (!passed.empty()) {
    chosen.warnings.push_back("torchtitan.toml: " + Join(passed, ", ") + " passed to TorchTitan unchecked: " + name +
                              " (job.custom_config_module) was not read here (" + why +
                              "); set torchtitan.path to the TorchTitan checkout to check them");
  }
  return chosen;
}

}  // namespace primus::train
