#include "config/launcher_config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "config/launcher_schema.h"
#include "config/merge.h"
#include "config/overrides.h"
#include "config/yaml_loader.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::config {
namespace {

// torchrun reads its flags from PET_<FLAG> too (Kubeflow sets these).
constexpr std::pair<std::string_view, std::string_view> kTorchrunVariables[] = {
    {"PET_NPROC_PER_NODE", "direct.nproc_per_node"}, {"PET_NNODES", "direct.nnodes"},
    {"PET_NODE_RANK", "direct.node_rank"},           {"PET_MASTER_ADDR", "direct.master_addr"},
    {"PET_MASTER_PORT", "direct.master_port"},       {"PET_MAX_RESTARTS", "direct.max_restarts"},
};

// Kubeflow's elastic PET_NNODES is "MIN:MAX": nnodes is MAX, and MIN goes to
// direct.min_nnodes (ElasticMinimum); "4:4" is 4 nodes.
std::optional<std::string> TorchrunValue(std::string_view variable, const std::string& text) {
  if (variable != "PET_NNODES") return text;
  size_t colon = text.find(':');
  if (colon == std::string::npos) return text;
  return text.substr(colon + 1);
}

std::optional<std::string> ElasticMinimum(const std::string& nnodes) {
  size_t colon = nnodes.find(':');
  if (colon == std::string::npos || nnodes.substr(0, colon) == nnodes.substr(colon + 1)) return std::nullopt;
  return nnodes.substr(0, colon);
}

std::string SectionOf(std::string_view path) { return std::string(path.substr(0, path.find('.'))); }

std::vector<std::string> SectionNames() {
  std::vector<std::string> sections;
  for (const SchemaKey& key : LauncherSchema().keys()) {
    std::string section = SectionOf(key.path);
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      sections.push_back(section);
    }
  }
  return sections;
}

Result<Value> FileLayer(const std::string& path, bool required, const Environment& env) {
  if (path.empty()) return Value::EmptyMap();
  if (!PathExists(path)) {
    if (!required) return Value::EmptyMap();
    return ConfigError("--config " + path + ": no such file",
                       "check the path; a relative path starts at the current directory (" +
                           CurrentDir() + ")");
  }
  Result<Value> layer = LoadYamlFile(path, env);
  if (!layer.ok()) return layer;
  Status status = LauncherSchema().Validate(&*layer, ScalarSource::kTyped);
  if (!status.ok()) return status.error();
  return layer;
}

Result<Value> EnvironmentLayer(const Environment& env, std::vector<std::string>* warnings) {
  const Schema& schema = LauncherSchema();
  Value layer = Value::EmptyMap();
  std::vector<std::string> known_variables;
  for (const SchemaKey& key : schema.keys()) {
    for (const std::string& variable : EnvironmentVariablesFor(key.path)) {
      known_variables.push_back(variable);
      std::optional<std::string> text = Lookup(env, variable);
      if (!text || text->empty()) continue;  // set-but-empty counts as unset
      if (variable == "PET_NNODES") {
        if (auto minimum = ElasticMinimum(*text)) {
          Status status = layer.Set("direct.min_nnodes", Value::String(*minimum, Origin::Env(variable)));
          (void)status;
        }
      }
      text = TorchrunValue(variable, *text);
      if (!text) continue;
      Status status = layer.Set(key.path, Value::String(*text, Origin::Env(variable)));
      (void)status;  // schema paths never cross a leaf
    }
  }
  // PRIMUS_DIRECT_NNODE=2 would otherwise do nothing, silently.
  for (const auto& [name, text] : env) {
    if (std::find(known_variables.begin(), known_variables.end(), name) != known_variables.end()) {
      continue;
    }
    for (const std::string& section : SectionNames()) {
      std::string prefix = "PRIMUS_" + ToUpper(section) + "_";
      if (!name.starts_with(prefix)) continue;
      std::vector<std::string> keys_of_section;
      for (const SchemaKey& key : schema.keys()) {
        if (SectionOf(key.path) == section) {
          keys_of_section.push_back(ToUpper(key.path.substr(section.size() + 1)));
        }
      }
      std::optional<std::string> match = ClosestMatch(name.substr(prefix.size()), keys_of_section);
      warnings->push_back("environment variable " + name + " is not a configuration setting" +
                          (match ? " (did you mean " + prefix + *match + "?)" : "") +
                          "; it is ignored");
    }
  }
  Status status = schema.Validate(&layer, ScalarSource::kText);
  if (!status.ok()) return status.error();
  return layer;
}

Result<Value> SetLayer(const std::vector<std::string>& assignments) {
  Value layer = Value::EmptyMap(Origin::Set());
  for (const std::string& assignment : assignments) {
    Status status = ApplyOverride(&layer, assignment, Origin::Set());
    if (!status.ok()) return status.error();
  }
  Status status = LauncherSchema().Validate(&layer, ScalarSource::kTyped);
  if (!status.ok()) return status.error();
  return layer;
}

// The flags of the command line, or (with `program`) another program's
// defaults, origin "<program> default".
Result<Value> FlagLayer(const std::vector<FlagSetting>& flags, const std::string& program = "") {
  const Schema& schema = LauncherSchema();
  Value layer = Value::EmptyMap();
  for (const FlagSetting& setting : flags) {
    Origin origin = !program.empty()          ? Origin::ProgramDefault(program)
                    : setting.from_environment ? Origin::Env(setting.flag)
                                               : Origin::Flag(setting.flag);
    const SchemaKey* key = schema.Find(setting.key);
    if (key == nullptr) {
      return ConfigError("internal error: " + origin.Describe() + " sets '" + setting.key +
                         "', which is not a launcher configuration key");
    }
    Value* existing = layer.Find(key->path);
    if (key->type == ValueType::kStringList) {
      if (existing == nullptr) {
        (void)layer.Set(key->path, Value::EmptyList(origin));
        existing = layer.Find(key->path);
      }
      for (const std::string& item : setting.values) existing->Append(Value::String(item, origin));
    } else if (key->type == ValueType::kStringMap) {
      if (existing == nullptr) {
        (void)layer.Set(key->path, Value::EmptyMap(origin));
        existing = layer.Find(key->path);
      }
      for (const std::string& entry : setting.values) {
        size_t equals = entry.find('=');
        if (equals == 0 || equals == std::string::npos) {
          return UsageError(origin.Describe() + ": expected NAME=VALUE, got '" + entry + "'",
                            setting.flag + " NCCL_DEBUG=INFO");
        }
        existing->Put(entry.substr(0, equals), Value::String(entry.substr(equals + 1), origin));
      }
    } else if (setting.values.empty()) {
      if (key->type != ValueType::kBool) {
        return UsageError(origin.Describe() + ": a value is missing",
                          setting.flag + " expects " + std::string(TypeName(key->type)));
      }
      (void)layer.Set(key->path, Value::String("true", origin));
    } else {
      (void)layer.Set(key->path, Value::String(setting.values.back(), origin));
    }
  }
  Status status = schema.Validate(&layer, ScalarSource::kText);
  if (!status.ok()) return status.error();
  return layer;
}

[[noreturn]] void ProgrammingError(std::string_view path, std::string_view problem) {
  std::fprintf(stderr, "internal error: launcher configuration key '%.*s' %.*s\n",
               static_cast<int>(path.size()), path.data(), static_cast<int>(problem.size()),
               problem.data());
  std::abort();
}

}  // namespace

LauncherSources LauncherSources::FromProcess(std::string explicit_file,
                                             std::vector<std::string> set_assignments,
                                             std::vector<FlagSetting> flags) {
  LauncherSources sources;
  sources.environment = ProcessEnvironment();
  sources.system_file = "/etc/primus/config.yaml";
  std::optional<std::string> xdg = Lookup(sources.environment, "XDG_CONFIG_HOME");
  std::string config_home = xdg && !xdg->empty() ? *xdg : JoinPath(HomeDir(), ".config");
  sources.user_file = JoinPath(config_home, "primus/config.yaml");
  sources.project_file = "./.primus.yaml";
  sources.explicit_file = std::move(explicit_file);
  sources.set_assignments = std::move(set_assignments);
  sources.flags = std::move(flags);
  return sources;
}

std::vector<std::string> EnvironmentVariablesFor(std::string_view path) {
  std::vector<std::string> variables;
  for (const auto& [variable, key] : kTorchrunVariables) {
    if (key == path) variables.emplace_back(variable);
  }
  if (SectionOf(path) == "main") {
    variables.push_back("PRIMUS_" + ToUpper(path.substr(path.find('.') + 1)));
  }
  variables.push_back("PRIMUS_" + ToUpper(ReplaceAll(std::string(path), ".", "_")));
  return variables;
}

Result<LauncherConfig> LoadLauncherConfig(const LauncherSources& sources) {
  Value effective = LauncherSchema().Defaults();
  std::vector<std::string> warnings;
  if (!sources.program_defaults.empty()) {
    Result<Value> program_layer = FlagLayer(sources.program_defaults, sources.program);
    if (!program_layer.ok()) return program_layer.error();
    effective = Merge(effective, *program_layer);
  }
  const std::pair<const std::string*, bool> files[] = {{&sources.system_file, false},
                                                       {&sources.user_file, false},
                                                       {&sources.project_file, false},
                                                       {&sources.explicit_file, true}};
  for (const auto& [path, required] : files) {
    Result<Value> layer = FileLayer(*path, required, sources.environment);
    if (!layer.ok()) return layer.error();
    effective = Merge(effective, *layer);
  }
  Result<Value> env_layer = EnvironmentLayer(sources.environment, &warnings);
  if (!env_layer.ok()) return env_layer.error();
  Result<Value> set_layer = SetLayer(sources.set_assignments);
  if (!set_layer.ok()) return set_layer.error();
  Result<Value> flag_layer = FlagLayer(sources.flags);
  if (!flag_layer.ok()) return flag_layer.error();

  // The scheduler layer sits between the files and the environment; which
  // convention it reads (direct.platform) may itself come from any layer.
  Value without_scheduler = Merge(Merge(Merge(effective, *env_layer), *set_layer), *flag_layer);
  const Value* platform = without_scheduler.Find("direct.platform");
  Result<SchedulerSettings> scheduler =
      sources.detect_scheduler
          ? DetectScheduler(sources.environment, platform != nullptr ? platform->AsString() : "auto")
          : Result<SchedulerSettings>(SchedulerSettings{});
  if (!scheduler.ok()) return scheduler.error();
  if (scheduler->agents_on_this_host > 1) {
    warnings.push_back(scheduler->scheduler + " started " + std::to_string(scheduler->agents_on_this_host) +
                       " primus-cli on this host, each a node that starts its own workers (they share its GPUs); "
                       "start one per node: mpirun --map-by ppr:1:node (Hydra: -ppn 1)");
  }
  Value scheduler_layer = SchedulerLayer(*scheduler);
  Status valid = LauncherSchema().Validate(&scheduler_layer, ScalarSource::kText);
  if (!valid.ok()) return valid.error();

  std::vector<Value> above_experiment = {std::move(scheduler_layer), std::move(*env_layer), std::move(*set_layer),
                                         std::move(*flag_layer)};
  return LauncherConfig(std::move(effective), std::move(above_experiment), std::move(warnings), std::move(*scheduler));
}

LauncherConfig::LauncherConfig(Value effective, std::vector<std::string> warnings, SchedulerSettings scheduler)
    : below_experiment_(effective),
      effective_(std::move(effective)),
      warnings_(std::move(warnings)),
      scheduler_(std::move(scheduler)) {}

LauncherConfig::LauncherConfig(Value below_experiment, std::vector<Value> above_experiment,
                               std::vector<std::string> warnings, SchedulerSettings scheduler)
    : below_experiment_(std::move(below_experiment)),
      above_experiment_(std::move(above_experiment)),
      warnings_(std::move(warnings)),
      scheduler_(std::move(scheduler)) {
  effective_ = below_experiment_;
  for (const Value& layer : above_experiment_) effective_ = Merge(effective_, layer);
}

Result<LauncherConfig> LauncherConfig::WithExperimentLayer(Value layer) const {
  Status valid = LauncherSchema().Validate(&layer, ScalarSource::kTyped);
  if (!valid.ok()) return valid.error();
  return LauncherConfig(Merge(below_experiment_, layer), above_experiment_, warnings_, scheduler_);
}

const Value& LauncherConfig::Leaf(std::string_view path, Value::Kind kind) const {
  const Value* value = effective_.Find(path);
  if (value == nullptr) ProgrammingError(path, "does not exist");
  if (value->kind() != kind) {
    ProgrammingError(path, "is " + std::string(Value::KindName(value->kind())) + ", not " +
                               std::string(Value::KindName(kind)));
  }
  return *value;
}

const std::string& LauncherConfig::GetString(std::string_view path) const {
  return Leaf(path, Value::Kind::kString).AsString();
}
int64_t LauncherConfig::GetInt(std::string_view path) const {
  return Leaf(path, Value::Kind::kInt).AsInt();
}
double LauncherConfig::GetDouble(std::string_view path) const {
  return Leaf(path, Value::Kind::kDouble).AsDouble();
}
bool LauncherConfig::GetBool(std::string_view path) const {
  return Leaf(path, Value::Kind::kBool).AsBool();
}

std::vector<std::string> LauncherConfig::GetStringList(std::string_view path) const {
  std::vector<std::string> items;
  for (const Value& item : Leaf(path, Value::Kind::kList).AsList()) items.push_back(item.AsString());
  return items;
}

std::vector<std::pair<std::string, std::string>> LauncherConfig::GetStringMap(
    std::string_view path) const {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& [name, item] : Leaf(path, Value::Kind::kMap).AsMap()) {
    entries.emplace_back(name, item.AsString());
  }
  return entries;
}

const Origin& LauncherConfig::OriginOf(std::string_view path) const {
  const Value* value = effective_.Find(path);
  if (value == nullptr) ProgrammingError(path, "does not exist");
  return value->origin();
}

}  // namespace primus::config
