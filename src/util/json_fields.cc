#include "util/json_fields.h"

#include <algorithm>

namespace primus::json_fields {
namespace {

// The deepest nesting of `text`'s arrays and objects, counted outside
// strings; stops counting past `limit`.
int Depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::optional<Json> Parse(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes || Depth(text, kMaxDepth) > kMaxDepth) return std::nullopt;
  Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

std::optional<Json> ParseObject(std::string_view text, size_t max_bytes) {
  std::optional<Json> json = Parse(text, max_bytes);
  if (!json || !json->is_object()) return std::nullopt;
  return json;
}

}  // namespace primus::json_fields
