#include "config/render_config.h"

#include <algorithm>

#include "config/scalar_types.h"
#include "util/strings.h"

namespace primus::config {
namespace {

// Comments line up at the longest line up to this width; longer lines push
// only their own comment.
constexpr size_t kMaxCommentColumn = 48;

struct Line {
  std::string text;
  std::string comment;  // empty: none
};

void CollectLines(const Value& node, int indent, std::vector<Line>* lines) {
  std::string pad(indent, ' ');
  if (node.IsMap() && !node.AsMap().empty()) {
    for (const auto& [key, item] : node.AsMap()) {
      std::string prefix = pad + QuoteForYaml(key) + ":";
      if (item.IsNonEmptyCollection()) {
        lines->push_back({prefix, ""});
        CollectLines(item, indent + 2, lines);
      } else {
        lines->push_back({prefix + " " + ScalarToYaml(item), item.origin().Describe()});
      }
    }
  } else if (node.IsList() && !node.AsList().empty()) {
    for (const Value& item : node.AsList()) {
      if (!item.IsNonEmptyCollection()) {
        lines->push_back({pad + "- " + ScalarToYaml(item), item.origin().Describe()});
        continue;
      }
      // A collection inside a list: its YAML, with the item's origin once.
      std::vector<std::string> nested = Split(item.ToYaml(), '\n');
      for (size_t i = 0; i < nested.size(); ++i) {
        if (nested[i].empty()) continue;
        lines->push_back({pad + (i == 0 ? "- " : "  ") + nested[i],
                          i == 0 ? item.origin().Describe() : ""});
      }
    }
  } else {
    lines->push_back({pad + ScalarToYaml(node), node.origin().Describe()});
  }
}

}  // namespace

std::string RenderConfig(const Value& effective, bool with_origin) {
  std::vector<Line> lines;
  CollectLines(effective, 0, &lines);
  size_t column = 0;
  for (const Line& line : lines) {
    if (!line.comment.empty() && line.text.size() <= kMaxCommentColumn) {
      column = std::max(column, line.text.size());
    }
  }
  std::string out;
  for (const Line& line : lines) {
    out += line.text;
    if (with_origin && !line.comment.empty()) {
      out += std::string(line.text.size() < column ? column - line.text.size() : 0, ' ');
      out += "  # " + line.comment;
    }
    out += "\n";
  }
  return out;
}

}  // namespace primus::config
