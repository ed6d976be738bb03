// The one way primus-cli reads JSON it did not write itself in this process:
// a worker's metrics line, a peer's control message, a preflight report, a
// job view, a snapshot's files, run metadata, an etcd reply. Nothing here
// throws: a document that is not JSON, nested too deep or too large is
// refused by Parse, and a field that is missing, of the wrong type, not
// finite or out of range reads as absent (or as the caller's fallback), so
// that no byte a peer, a worker or a file sends can end the process.
// (nlohmann's own .value(), .get<>() and .at() throw on a wrong type: use
// them only on JSON this process built.)
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace primus::json_fields {

using Json = nlohmann::json;

// Deeper than this is refused: our documents are a few levels deep, and a
// reader that walks a document recursively must not run out of stack.
inline constexpr int kMaxDepth = 64;

// `text` parsed, or nullopt when it is not one JSON value, nests deeper than
// kMaxDepth or is longer than `max_bytes`.
std::optional<Json> Parse(std::string_view text, size_t max_bytes = 64 << 20);
// Parse, for a document that must be an object.
std::optional<Json> ParseObject(std::string_view text, size_t max_bytes = 64 << 20);

// Sets json[key] only when `value` holds one.
template <typename T>
void Put(Json& json, const char* key, const std::optional<T>& value) {
  if (value) json[key] = *value;
}

inline std::optional<double> Number(const Json& json, const char* key) {
  if (!json.is_object()) return std::nullopt;
  auto it = json.find(key);
  if (it == json.end() || !it->is_number()) return std::nullopt;
  double value = it->get<double>();
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

inline std::optional<int64_t> Integer(const Json& json, const char* key) {
  std::optional<double> value = Number(json, key);
  if (!value || *value < -9.2e18 || *value > 9.2e18) return std::nullopt;
  auto it = json.find(key);
  if (it->is_number_integer() && !it->is_number_unsigned()) return it->get<int64_t>();
  if (it->is_number_unsigned()) {
    uint64_t exact = it->get<uint64_t>();
    return exact <= static_cast<uint64_t>(INT64_MAX) ? std::optional<int64_t>(static_cast<int64_t>(exact))
                                                     : std::nullopt;
  }
  return static_cast<int64_t>(std::llround(*value));
}

inline std::optional<int> SmallInteger(const Json& json, const char* key) {
  std::optional<int64_t> value = Integer(json, key);
  if (!value || *value < INT32_MIN || *value > INT32_MAX) return std::nullopt;
  return static_cast<int>(*value);
}

// An integer within [low, high]; nullopt outside it.
inline std::optional<int> IntegerIn(const Json& json, const char* key, int low, int high) {
  std::optional<int> value = SmallInteger(json, key);
  if (!value || *value < low || *value > high) return std::nullopt;
  return value;
}

inline std::optional<uint64_t> Unsigned(const Json& json, const char* key) {
  std::optional<double> value = Number(json, key);
  if (!value || *value < 0) return std::nullopt;
  auto it = json.find(key);
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (*value >= 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(*value);
}

inline std::optional<bool> Bool(const Json& json, const char* key) {
  if (!json.is_object()) return std::nullopt;
  auto it = json.find(key);
  if (it == json.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

// The string at `key`, or `fallback` when there is none.
inline std::string Text(const Json& json, const char* key, const std::string& fallback = "") {
  if (!json.is_object()) return fallback;
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : fallback;
}

inline const Json& Array(const Json& json, const char* key) {
  static const Json empty = Json::array();
  if (!json.is_object()) return empty;
  auto it = json.find(key);
  return it != json.end() && it->is_array() ? *it : empty;
}

inline const Json& Object(const Json& json, const char* key) {
  static const Json empty = Json::object();
  if (!json.is_object()) return empty;
  auto it = json.find(key);
  return it != json.end() && it->is_object() ? *it : empty;
}

}  // namespace primus::json_fields
