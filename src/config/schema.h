// Schema: the table of configuration keys a consumer knows (dotted path,
// type, default, one-line description), and the validation that turns a
// typo or a wrong type in any layer into a located error with a suggestion,
// instead of a value that is silently ignored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/value.h"
#include "util/error.h"

namespace primus::config {

enum class ValueType { kString, kInt, kDouble, kBool, kStringList, kStringMap, kAny };

// "a string", "an integer", "a number", "a boolean", "a list of strings",
// "a map of strings", "any value".
std::string_view TypeName(ValueType type);

struct SchemaKey {
  std::string path;          // "direct.nnodes"
  ValueType type;
  std::string default_text;  // read like an environment variable: "1", "auto", "" (empty list)
  std::string description;   // one line
  // kInt only: the accepted range, so that a sum or product of settings
  // can never overflow where it is used (TP x PP x CP, micro batch x DP).
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
};

// How the scalars of a layer were written.
enum class ScalarSource {
  kTyped,  // YAML files and --set: already typed; "2" in quotes stays a string
  kText,   // environment variables and flags: strings, converted to the key's type
};

class Schema {
 public:
  // Aborts on a default that does not read as its type: a programming error.
  explicit Schema(std::vector<SchemaKey> keys);

  const std::vector<SchemaKey>& keys() const { return keys_; }
  const SchemaKey* Find(std::string_view path) const;
  // True for "direct" when "direct.nnodes" is a key.
  bool IsSection(std::string_view path) const;

  // Every key at its default, origin "default", in table order.
  Value Defaults() const;

  // Checks one layer (a map) and converts its values to the schema types in
  // place. Unknown keys, keys containing a dot ("training.steps": 3 would
  // name no setting), values of the wrong type and integers outside their
  // key's range are ConfigErrors at their origin. Conversions that never lose meaning are done:
  //   int -> double; int or number -> string ("user: 1000" is "1000");
  //   scalars in a string list or string map -> their text;
  //   null -> "" / [] / {} for string / list / map keys, {} for a section.
  // With kText, strings are read as the key's type: "2" -> 2, "yes" -> true,
  // "a,b" -> [a, b] (comma-separated), "K=V,K2=V2" -> a map.
  Status Validate(Value* layer, ScalarSource source) const;

  // One text (environment variable, flag) as the key's type.
  Result<Value> ConvertText(const SchemaKey& key, std::string_view text, const Origin& origin) const;

 private:
  Status ValidateMap(Value* map, const std::string& prefix, ScalarSource source) const;
  Status CheckValue(const SchemaKey& key, Value* value, ScalarSource source) const;
  Status CheckType(const SchemaKey& key, Value* value, ScalarSource source) const;
  Error UnknownKey(const std::string& path, const Value& value) const;
  std::vector<std::string> ChildNames(std::string_view prefix) const;

  std::vector<SchemaKey> keys_;
};

}  // namespace primus::config
