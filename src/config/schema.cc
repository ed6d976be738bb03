#include "config/schema.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "config/scalar_types.h"
#include "util/strings.h"

namespace primus::config {
namespace {

std::string ParentPath(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string LeafName(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string JoinKey(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

}  // namespace

std::string_view TypeName(ValueType type) {
  switch (type) {
    case ValueType::kString: return "a string";
    case ValueType::kInt: return "an integer";
    case ValueType::kDouble: return "a number";
    case ValueType::kBool: return "a boolean (true or false)";
    case ValueType::kStringList: return "a list of strings";
    case ValueType::kStringMap: return "a map of strings";
    case ValueType::kAny: return "any value";
  }
  return "?";
}

Schema::Schema(std::vector<SchemaKey> keys) : keys_(std::move(keys)) {
  for (const SchemaKey& key : keys_) {
    Value value = Value::String(key.default_text, Origin::Default());
    Status status = CheckValue(key, &value, ScalarSource::kText);
    if (!status.ok()) {
      std::fprintf(stderr, "internal error: schema default of %s: %s\n", key.path.c_str(),
                   status.error().message.c_str());
      std::abort();
    }
  }
}

const SchemaKey* Schema::Find(std::string_view path) const {
  for (const SchemaKey& key : keys_) {
    if (key.path == path) return &key;
  }
  return nullptr;
}

bool Schema::IsSection(std::string_view path) const {
  for (const SchemaKey& key : keys_) {
    if (key.path.size() > path.size() && key.path.starts_with(path) && key.path[path.size()] == '.') {
      return true;
    }
  }
  return false;
}

std::vector<std::string> Schema::ChildNames(std::string_view prefix) const {
  std::vector<std::string> names;
  for (const SchemaKey& key : keys_) {
    std::string_view rest = key.path;
    if (!prefix.empty()) {
      if (!rest.starts_with(prefix) || rest.size() <= prefix.size() || rest[prefix.size()] != '.') {
        continue;
      }
      rest.remove_prefix(prefix.size() + 1);
    }
    std::string name(rest.substr(0, rest.find('.')));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

Value Schema::Defaults() const {
  Value tree = Value::EmptyMap(Origin::Default());
  for (const SchemaKey& key : keys_) {
    Status status = tree.Set(key.path, *ConvertText(key, key.default_text, Origin::Default()));
    (void)status;  // paths of a schema never cross a leaf
  }
  return tree;
}

Result<Value> Schema::ConvertText(const SchemaKey& key, std::string_view text,
                                  const Origin& origin) const {
  auto mismatch = [&](std::string_view expected) -> Error {
    return ConfigErrorAt(origin,
                         key.path + ": expected " + std::string(expected) + ", got '" +
                             std::string(text) + "'",
                         key.path + ": " + key.description);
  };
  switch (key.type) {
    case ValueType::kString: return Value::String(std::string(text), origin);
    case ValueType::kAny: return InferScalar(Trim(text), origin);
    case ValueType::kInt:
      if (auto number = ParseInt(text)) return Value::Int(*number, origin);
      return mismatch(TypeName(key.type));
    case ValueType::kDouble:
      if (auto number = ParseDouble(text)) return Value::Double(*number, origin);
      return mismatch(TypeName(key.type));
    case ValueType::kBool:
      if (auto flag = ParseBool(text)) return Value::Bool(*flag, origin);
      return mismatch("a boolean (true/false, yes/no, on/off, 1/0)");
    case ValueType::kStringList: {
      Value list = Value::EmptyList(origin);
      for (const std::string& item : Split(text, ',')) {
        std::string_view trimmed = Trim(item);
        if (!trimmed.empty()) list.Append(Value::String(std::string(trimmed), origin));
      }
      return list;
    }
    case ValueType::kStringMap: {
      Value map = Value::EmptyMap(origin);
      for (const std::string& item : Split(text, ',')) {
        std::string_view trimmed = Trim(item);
        if (trimmed.empty()) continue;
        size_t equals = trimmed.find('=');
        if (equals == 0 || equals == std::string_view::npos) {
          return mismatch("KEY=VALUE pairs separated by commas");
        }
        map.Put(std::string(Trim(trimmed.substr(0, equals))),
                Value::String(std::string(trimmed.substr(equals + 1)), origin));
      }
      return map;
    }
  }
  return mismatch(TypeName(key.type));
}

Status Schema::CheckValue(const SchemaKey& key, Value* value, ScalarSource source) const {
  Status typed = CheckType(key, value, source);
  if (!typed.ok() || !value->IsInt()) return typed;
  int64_t number = value->AsInt();
  if (number < key.min || number > key.max) {
    std::string range = key.max == INT64_MAX   ? "at least " + std::to_string(key.min)
                        : key.min == INT64_MIN ? "at most " + std::to_string(key.max)
                                               : "from " + std::to_string(key.min) + " to " + std::to_string(key.max);
    return ConfigErrorAt(value->origin(), key.path + ": " + std::to_string(number) + " is out of range; expected " + range,
                         key.path + ": " + key.description);
  }
  return Status::Ok();
}

Status Schema::CheckType(const SchemaKey& key, Value* value, ScalarSource source) const {
  if (source == ScalarSource::kText && value->IsString()) {
    Result<Value> converted = ConvertText(key, value->AsString(), value->origin());
    if (!converted.ok()) return converted.error();
    *value = std::move(*converted);
    return Status::Ok();
  }
  auto wrong_type = [&](const Value& found, std::string_view expected,
                        const std::string& hint) -> Error {
    return ConfigErrorAt(found.origin(),
                         key.path + ": expected " + std::string(expected) + ", got " +
                             found.DescribeForMessage(),
                         hint.empty() ? key.path + ": " + key.description : hint);
  };
  // A scalar where a string is wanted: numbers read as their text.
  auto as_string = [](Value* item) -> bool {
    if (item->IsString()) return true;
    if (!item->IsNumber()) return false;
    *item = Value::String(item->ScalarText(), item->origin());
    return true;
  };
  switch (key.type) {
    case ValueType::kAny: return Status::Ok();
    case ValueType::kString:
      if (value->IsNull()) *value = Value::String("", value->origin());
      if (!as_string(value)) return wrong_type(*value, TypeName(key.type), "");
      return Status::Ok();
    case ValueType::kInt:
      if (!value->IsInt()) return wrong_type(*value, TypeName(key.type), "");
      return Status::Ok();
    case ValueType::kDouble:
      if (!value->IsNumber()) return wrong_type(*value, TypeName(key.type), "");
      *value = Value::Double(value->AsDouble(), value->origin());
      return Status::Ok();
    case ValueType::kBool:
      if (!value->IsBool()) return wrong_type(*value, TypeName(key.type), "");
      return Status::Ok();
    case ValueType::kStringList:
      if (value->IsNull()) *value = Value::EmptyList(value->origin());
      if (!value->IsList()) {
        return wrong_type(*value, TypeName(key.type),
                          "write a list: " + LeafName(key.path) + ": [a, b], or one '- item' per line");
      }
      for (Value& item : value->AsList()) {
        if (!as_string(&item)) return wrong_type(item, "a string in the list", "");
      }
      return Status::Ok();
    case ValueType::kStringMap:
      if (value->IsNull()) *value = Value::EmptyMap(value->origin());
      if (!value->IsMap()) {
        return wrong_type(*value, TypeName(key.type),
                          "write a map: one 'NAME: value' per line under " + LeafName(key.path) + ":");
      }
      for (auto& [name, item] : value->AsMap()) {
        if (item.IsNull()) item = Value::String("", item.origin());
        if (item.IsBool()) item = Value::String(item.ScalarText(), item.origin());
        if (!as_string(&item)) {
          return wrong_type(item, "a string for '" + name + "'", "");
        }
      }
      return Status::Ok();
  }
  return Status::Ok();
}

Error Schema::UnknownKey(const std::string& path, const Value& value) const {
  std::string parent = ParentPath(path);
  std::string leaf = LeafName(path);
  std::vector<std::string> siblings = ChildNames(parent);
  std::string suggestion;
  if (auto match = ClosestMatch(leaf, siblings)) {
    suggestion = " (did you mean '" + JoinKey(parent, *match) + "'?)";
  } else {
    // The right key in the wrong place: "image:" at the top level.
    std::vector<std::string> elsewhere;
    for (const SchemaKey& key : keys_) {
      if (LeafName(key.path) == leaf) elsewhere.push_back("'" + key.path + "'");
    }
    if (!elsewhere.empty()) suggestion = " (did you mean " + Join(elsewhere, " or ") + "?)";
  }
  std::string hint = parent.empty() ? "the sections are: " + Join(siblings, ", ")
                                    : "the keys of '" + parent + "' are: " + Join(siblings, ", ");
  // The common mix-up: an experiment given as the launcher's --config (before
  // the mode or task) instead of train's (after the subtask).
  static const std::vector<std::string> experiment_keys = {"exp_name", "workspace", "backend", "modules",
                                                           "framework", "model", "training", "parallelism"};
  if (parent.empty() && suggestion.empty() &&
      std::find(experiment_keys.begin(), experiment_keys.end(), leaf) != experiment_keys.end()) {
    return ConfigErrorAt(value.key_origin(),
                         "unknown key '" + path + "': this file looks like an experiment, given as the launcher's "
                         "configuration",
                         "--config before the mode or task names the launcher's configuration (" +
                             Join(siblings, ", ") + "); an experiment's --config goes after the subtask: "
                             "primus-cli train pretrain --config FILE");
  }
  return ConfigErrorAt(value.key_origin(), "unknown key '" + path + "'" + suggestion, hint);
}

Status Schema::ValidateMap(Value* map, const std::string& prefix, ScalarSource source) const {
  for (auto& [name, item] : map->AsMap()) {
    std::string path = JoinKey(prefix, name);
    if (name.find('.') != std::string::npos) {
      // Find("training.steps") would match, but the tree has no 'training'
      // map holding 'steps': the value would be validated, then ignored.
      std::vector<std::string> parts = Split(name, '.');
      std::string nested;
      for (size_t i = 1; i < parts.size(); ++i) nested += "{" + parts[i] + ": ";
      nested += item.IsScalar() ? ScalarToYaml(item) : "...";
      for (size_t i = 1; i < parts.size(); ++i) nested += "}";
      return ConfigErrorAt(item.key_origin(),
                           "the key '" + name + "' contains a dot; a key in a file names one level, so '" + path +
                               "' is no setting",
                           "nest the keys instead: " + parts[0] + ": " + nested);
    }
    if (const SchemaKey* key = Find(path)) {
      Status status = CheckValue(*key, &item, source);
      if (!status.ok()) return status;
    } else if (IsSection(path)) {
      if (item.IsNull()) item = Value::EmptyMap(item.origin());  // "slurm:" with every line commented out
      if (!item.IsMap()) {
        return ConfigErrorAt(item.origin(),
                             path + ": expected a map of settings, got " + item.DescribeForMessage(),
                             "the keys of '" + path + "' are: " + Join(ChildNames(path), ", "));
      }
      Status status = ValidateMap(&item, path, source);
      if (!status.ok()) return status;
    } else {
      return UnknownKey(path, item);
    }
  }
  return Status::Ok();
}

Status Schema::Validate(Value* layer, ScalarSource source) const {
  if (layer->IsNull()) *layer = Value::EmptyMap(layer->origin());
  if (!layer->IsMap()) {
    return ConfigErrorAt(layer->origin(),
                         "expected a map of settings, got " + layer->DescribeForMessage(),
                         "the sections are: " + Join(ChildNames(""), ", "));
  }
  return ValidateMap(layer, "", source);
}

}  // namespace primus::config
