// Reading and writing the optional fields of telemetry JSON (node samples,
// the job view): a field that is missing, of the wrong type or not finite
// reads as absent, never as an exception, since these documents come from
// other nodes and from files a worker may still be writing.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace primus::telemetry::json_fields {

using Json = nlohmann::json;

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
  return static_cast<int64_t>(std::llround(*value));
}

inline std::optional<int> SmallInteger(const Json& json, const char* key) {
  std::optional<int64_t> value = Integer(json, key);
  if (!value || *value < INT32_MIN || *value > INT32_MAX) return std::nullopt;
  return static_cast<int>(*value);
}

inline std::optional<uint64_t> Unsigned(const Json& json, const char* key) {
  std::optional<double> value = Number(json, key);
  if (!value || *value < 0) return std::nullopt;
  auto it = json.find(key);
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  return static_cast<uint64_t>(*value);
}

inline std::string Text(const Json& json, const char* key) {
  if (!json.is_object()) return "";
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : "";
}

inline const Json& Array(const Json& json, const char* key) {
  static const Json empty = Json::array();
  if (!json.is_object()) return empty;
  auto it = json.find(key);
  return it != json.end() && it->is_array() ? *it : empty;
}

}  // namespace primus::telemetry::json_fields
