// Value: the configuration tree every YAML file, environment variable, flag
// and override is turned into. null | bool | int | double | string | list |
// map; maps keep their insertion order and keys keep their case. Every node
// carries the Origin it came from, so that errors and `config show --origin`
// can say which file, line and column (or variable, flag) set it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "config/origin.h"
#include "util/error.h"

namespace primus::config {

class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kDouble, kString, kList, kMap };
  using List = std::vector<Value>;
  using Map = std::vector<std::pair<std::string, Value>>;  // insertion-ordered

  Value() = default;  // null, with no origin
  static Value Null(Origin origin = {});
  static Value Bool(bool value, Origin origin = {});
  static Value Int(int64_t value, Origin origin = {});
  static Value Double(double value, Origin origin = {});
  static Value String(std::string value, Origin origin = {});
  static Value EmptyList(Origin origin = {});
  static Value EmptyMap(Origin origin = {});

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool IsNull() const { return kind() == Kind::kNull; }
  bool IsBool() const { return kind() == Kind::kBool; }
  bool IsInt() const { return kind() == Kind::kInt; }
  bool IsDouble() const { return kind() == Kind::kDouble; }
  bool IsNumber() const { return IsInt() || IsDouble(); }
  bool IsString() const { return kind() == Kind::kString; }
  bool IsList() const { return kind() == Kind::kList; }
  bool IsMap() const { return kind() == Kind::kMap; }
  // A list or map with at least one item (written as an indented block in YAML).
  bool IsNonEmptyCollection() const;
  bool IsScalar() const { return !IsList() && !IsMap(); }

  // Typed access; calling the wrong one is a programming error (it throws
  // std::bad_variant_access). AsDouble also reads an int.
  bool AsBool() const { return std::get<bool>(data_); }
  int64_t AsInt() const { return std::get<int64_t>(data_); }
  double AsDouble() const;
  const std::string& AsString() const { return std::get<std::string>(data_); }
  const List& AsList() const { return std::get<List>(data_); }
  List& AsList() { return std::get<List>(data_); }
  const Map& AsMap() const { return std::get<Map>(data_); }
  Map& AsMap() { return std::get<Map>(data_); }

  const Origin& origin() const { return origin_; }
  void set_origin(Origin origin) { origin_ = std::move(origin); }
  // For a value read from a map in a file: where its key was written (errors
  // about the key itself, like an unknown key, point there). Otherwise origin().
  const Origin& key_origin() const { return key_origin_.source.empty() ? origin_ : key_origin_; }
  void set_key_origin(Origin origin) { key_origin_ = std::move(origin); }
  // Gives this node and everything under it the same origin.
  void SetOriginEverywhere(const Origin& origin);

  // Lists.
  void Append(Value item);

  // Maps: one key (no dots involved).
  const Value* Get(std::string_view key) const;
  Value* Get(std::string_view key);
  // Replaces the value of an existing key in place, or appends the key.
  void Put(std::string key, Value value);
  bool Remove(std::string_view key);

  // Dotted paths ("direct.nnodes"). Find returns nullptr when any part is
  // missing or not a map. Set creates missing intermediate maps; it fails,
  // naming the blocking value and where it came from, when a part of the
  // path exists and is not a map.
  const Value* Find(std::string_view dotted_path) const;
  Value* Find(std::string_view dotted_path);
  Status Set(std::string_view dotted_path, Value value);

  // A scalar as plain text: "abc", "42", "0.5", "true", "" for null.
  std::string ScalarText() const;
  // For messages: "a string ('abc')", "an integer (42)", "a list", "null (an empty value)".
  std::string DescribeForMessage() const;
  // "a string", "an integer", "a number", "a boolean", "a list", "a map", "null".
  static std::string_view KindName(Kind kind);

  // Block-style YAML that reads back (with any YAML 1.2 parser, and with
  // LoadYamlString) as an equal Value. LoadYamlString interpolates `${...}`
  // even in quoted strings; pass escape_dollars_for_reload to write every
  // '$' as '$$' so that such text survives a reload unchanged.
  std::string ToYaml(bool escape_dollars_for_reload = false) const;
  // ToYaml's lines, each with the value whose origin it shows (`config show
  // --origin`): a scalar's line, or the first line of a collection inside a
  // list; nullptr for a key that opens a collection and for a list item's
  // further lines.
  struct YamlLine {
    std::string text;  // without its line break
    const Value* source = nullptr;
  };
  std::vector<YamlLine> ToYamlLines(bool escape_dollars_for_reload = false) const;
  // Maps become objects in insertion order.
  nlohmann::ordered_json ToJson() const;

  // Compares content only; origins are ignored. Map order matters.
  bool operator==(const Value& other) const;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, List, Map> data_;
  Origin origin_;
  Origin key_origin_;
};

// Splits "a.b.c" into its parts ("a..b" gives an empty part).
std::vector<std::string> SplitDottedPath(std::string_view dotted_path);

}  // namespace primus::config
