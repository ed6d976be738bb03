#include "config/render_config.h"

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace primus::config {
namespace {

// Comments line up at the longest line up to this width; longer lines push
// only their own comment.
constexpr size_t kMaxCommentColumn = 48;

}  // namespace

std::string RenderConfig(const Value& effective, bool with_origin) {
  std::vector<Value::YamlLine> lines = effective.ToYamlLines();
  std::vector<std::string> comments;
  for (const Value::YamlLine& line : lines) comments.push_back(line.source ? line.source->origin().Describe() : "");
  size_t column = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!comments[i].empty() && lines[i].text.size() <= kMaxCommentColumn) {
      column = std::max(column, lines[i].text.size());
    }
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i].text;
    if (with_origin && !comments[i].empty()) {
      out += std::string(lines[i].text.size() < column ? column - lines[i].text.size() : 0, ' ');
      out += "  # " + comments[i];
    }
    out += "\n";
  }
  return out;
}

namespace {

void CollectOrigins(const Value& value, const std::string& key, nlohmann::ordered_json* origins) {
  if (value.IsMap()) {
    for (const auto& [name, child] : value.AsMap()) CollectOrigins(child, key.empty() ? name : key + "." + name, origins);
    return;
  }
  std::string origin = value.origin().Describe();
  if (!key.empty() && !origin.empty()) (*origins)[key] = origin;
}

}  // namespace

std::string RenderConfigJson(const Value& effective, bool with_origin) {
  nlohmann::ordered_json out;
  out["config"] = effective.ToJson();
  if (with_origin) {
    nlohmann::ordered_json origins = nlohmann::ordered_json::object();
    CollectOrigins(effective, "", &origins);
    out["origins"] = std::move(origins);
  }
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace primus::config
