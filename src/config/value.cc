#include "config/value.h"

#include <nlohmann/json.hpp>

#include "config/scalar_types.h"
#include "util/strings.h"

namespace primus::config {

Value Value::Null(Origin origin) {
  Value value;
  value.origin_ = std::move(origin);
  return value;
}

Value Value::Bool(bool b, Origin origin) {
  Value value = Null(std::move(origin));
  value.data_ = b;
  return value;
}

Value Value::Int(int64_t i, Origin origin) {
  Value value = Null(std::move(origin));
  value.data_ = i;
  return value;
}

Value Value::Double(double d, Origin origin) {
  Value value = Null(std::move(origin));
  value.data_ = d;
  return value;
}

Value Value::String(std::string s, Origin origin) {
  Value value = Null(std::move(origin));
  value.data_ = std::move(s);
  return value;
}

Value Value::EmptyList(Origin origin) {
  Value value = Null(std::move(origin));
  value.data_ = List{};
  return value;
}

Value Value::EmptyMap(Origin origin) {
  Value value = Null(std::move(origin));
  value.data_ = Map{};
  return value;
}

double Value::AsDouble() const {
  if (IsInt()) return static_cast<double>(AsInt());
  return std::get<double>(data_);
}

void Value::SetOriginEverywhere(const Origin& origin) {
  origin_ = origin;
  key_origin_ = Origin();
  if (IsList()) {
    for (Value& item : AsList()) item.SetOriginEverywhere(origin);
  } else if (IsMap()) {
    for (auto& [key, item] : AsMap()) item.SetOriginEverywhere(origin);
  }
}

void Value::Append(Value item) { AsList().push_back(std::move(item)); }

const Value* Value::Get(std::string_view key) const {
  if (!IsMap()) return nullptr;
  for (const auto& [name, item] : AsMap()) {
    if (name == key) return &item;
  }
  return nullptr;
}

Value* Value::Get(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->Get(key));
}

void Value::Put(std::string key, Value value) {
  if (Value* existing = Get(key)) {
    *existing = std::move(value);
    return;
  }
  AsMap().emplace_back(std::move(key), std::move(value));
}

bool Value::Remove(std::string_view key) {
  if (!IsMap()) return false;
  Map& map = AsMap();
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first == key) {
      map.erase(it);
      return true;
    }
  }
  return false;
}

std::vector<std::string> SplitDottedPath(std::string_view dotted_path) {
  return Split(dotted_path, '.');
}

const Value* Value::Find(std::string_view dotted_path) const {
  const Value* node = this;
  for (const std::string& part : SplitDottedPath(dotted_path)) {
    node = node->Get(part);
    if (node == nullptr) return nullptr;
  }
  return node;
}

Value* Value::Find(std::string_view dotted_path) {
  return const_cast<Value*>(static_cast<const Value*>(this)->Find(dotted_path));
}

Status Value::Set(std::string_view dotted_path, Value value) {
  std::vector<std::string> parts = SplitDottedPath(dotted_path);
  for (const std::string& part : parts) {
    if (part.empty()) {
      return ConfigError("cannot set '" + std::string(dotted_path) + "': the path has an empty part",
                         "write keys separated by single dots, e.g. direct.nnodes");
    }
  }
  if (IsNull()) data_ = Map{};
  Value* node = this;
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += (i ? "." : "") + parts[i];
    if (!node->IsMap()) break;  // only the root can be a non-map here; checked below
    Value* child = node->Get(parts[i]);
    if (child == nullptr) {
      node->Put(parts[i], EmptyMap(value.origin()));
      child = node->Get(parts[i]);
    } else if (child->IsNull()) {
      *child = EmptyMap(value.origin());
    } else if (!child->IsMap()) {
      return ConfigError("cannot set '" + std::string(dotted_path) + "': '" + walked + "' is " +
                             child->DescribeForMessage() + " from " + child->origin().Describe() +
                             ", not a map",
                         "set '" + walked + "' itself, or remove its value first");
    }
    node = child;
  }
  if (!node->IsMap()) {
    return ConfigError("cannot set '" + std::string(dotted_path) + "' inside " +
                       node->DescribeForMessage());
  }
  node->Put(parts.back(), std::move(value));
  return Status::Ok();
}

std::string Value::ScalarText() const {
  switch (kind()) {
    case Kind::kNull: return "";
    case Kind::kBool: return AsBool() ? "true" : "false";
    case Kind::kInt: return std::to_string(AsInt());
    case Kind::kDouble: return FormatDouble(AsDouble());
    case Kind::kString: return AsString();
    case Kind::kList: return "[...]";
    case Kind::kMap: return "{...}";
  }
  return "";
}

std::string_view Value::KindName(Kind kind) {
  switch (kind) {
    case Kind::kNull: return "null";
    case Kind::kBool: return "a boolean";
    case Kind::kInt: return "an integer";
    case Kind::kDouble: return "a number";
    case Kind::kString: return "a string";
    case Kind::kList: return "a list";
    case Kind::kMap: return "a map";
  }
  return "?";
}

std::string Value::DescribeForMessage() const {
  switch (kind()) {
    case Kind::kNull: return "null (an empty value)";
    case Kind::kString: return "a string ('" + AsString() + "')";
    case Kind::kList:
    case Kind::kMap: return std::string(KindName(kind()));
    default: return std::string(KindName(kind())) + " (" + ScalarText() + ")";
  }
}

bool Value::IsNonEmptyCollection() const {
  return (IsList() && !AsList().empty()) || (IsMap() && !AsMap().empty());
}

namespace {

void CollectYamlLines(const Value& value, int indent, bool escape_dollars, std::vector<Value::YamlLine>* lines) {
  std::string pad(indent, ' ');
  if (value.IsMap() && !value.AsMap().empty()) {
    for (const auto& [key, item] : value.AsMap()) {
      std::string prefix = pad + QuoteForYaml(key) + ":";
      if (item.IsNonEmptyCollection()) {
        lines->push_back({prefix, nullptr});
        CollectYamlLines(item, indent + 2, escape_dollars, lines);
      } else {
        lines->push_back({prefix + " " + ScalarToYaml(item, escape_dollars), &item});
      }
    }
  } else if (value.IsList() && !value.AsList().empty()) {
    for (const Value& item : value.AsList()) {
      if (!item.IsNonEmptyCollection()) {
        lines->push_back({pad + "- " + ScalarToYaml(item, escape_dollars), &item});
        continue;
      }
      // A collection as a list item: "- " takes the place of its first
      // line's indentation, and that line shows the item's origin.
      size_t first = lines->size();
      CollectYamlLines(item, indent + 2, escape_dollars, lines);
      for (size_t i = first; i < lines->size(); ++i) (*lines)[i].source = nullptr;
      (*lines)[first].text = pad + "- " + (*lines)[first].text.substr(indent + 2);
      (*lines)[first].source = &item;
    }
  } else {
    lines->push_back({pad + ScalarToYaml(value, escape_dollars), &value});
  }
}

}  // namespace

std::vector<Value::YamlLine> Value::ToYamlLines(bool escape_dollars_for_reload) const {
  std::vector<YamlLine> lines;
  CollectYamlLines(*this, 0, escape_dollars_for_reload, &lines);
  return lines;
}

std::string Value::ToYaml(bool escape_dollars_for_reload) const {
  std::string out;
  for (const YamlLine& line : ToYamlLines(escape_dollars_for_reload)) out += line.text + "\n";
  return out;
}

nlohmann::ordered_json Value::ToJson() const {
  switch (kind()) {
    case Kind::kNull: return nullptr;
    case Kind::kBool: return AsBool();
    case Kind::kInt: return AsInt();
    case Kind::kDouble: return AsDouble();
    case Kind::kString: return AsString();
    case Kind::kList: {
      nlohmann::ordered_json array = nlohmann::ordered_json::array();
      for (const Value& item : AsList()) array.push_back(item.ToJson());
      return array;
    }
    case Kind::kMap: {
      // Keys are distinct: append to the ordered map's vector directly, since
      // its operator[] searches linearly (quadratic for a map of 100,000 keys).
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      auto& entries = object.get_ref<nlohmann::ordered_json::object_t&>();
      using Entries = nlohmann::ordered_json::object_t::Container;
      static_cast<Entries&>(entries).reserve(AsMap().size());
      for (const auto& [key, item] : AsMap()) static_cast<Entries&>(entries).emplace_back(key, item.ToJson());
      return object;
    }
  }
  return nullptr;
}

bool Value::operator==(const Value& other) const { return data_ == other.data_; }

}  // namespace primus::config
