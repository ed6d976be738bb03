#include "util/hostlist.h"

#include <algorithm>
#include <cctype>

#include "util/strings.h"

namespace primus {
namespace {

Error Malformed(std::string_view expression, size_t position, const std::string& what) {
  return UsageError("host list '" + std::string(expression) + "': " + what + " at character " + std::to_string(position + 1),
                    "write hosts as in Slurm: node[01-04,07],gpu-a[1-2]");
}

// Splits on commas that are not inside brackets.
Result<std::vector<std::string>> SplitTopLevel(std::string_view expression) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (size_t i = 0; i < expression.size(); ++i) {
    char c = expression[i];
    if (c == '[') {
      if (depth > 0) return Malformed(expression, i, "'[' inside brackets");
      ++depth;
    } else if (c == ']') {
      if (depth == 0) return Malformed(expression, i, "']' without '['");
      --depth;
    } else if (c == ',' && depth == 0) {
      if (!current.empty()) items.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (depth != 0) return Malformed(expression, expression.size() - 1, "unclosed '['");
  if (!current.empty()) items.push_back(current);
  return items;
}

// "01-04,07" -> {"01","02","03","04","07"}.
Result<std::vector<std::string>> ExpandRanges(std::string_view expression, std::string_view body, size_t offset) {
  std::vector<std::string> values;
  for (const std::string& part : Split(body, ',')) {
    size_t dash = part.find('-');
    std::string low = part.substr(0, dash);
    std::string high = dash == std::string::npos ? low : part.substr(dash + 1);
    auto is_number = [](const std::string& s) {
      return !s.empty() && s.size() < 19 && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    if (!is_number(low) || !is_number(high)) return Malformed(expression, offset, "'" + part + "' is not a number or a range");
    int64_t from = *ParseInt(low), to = *ParseInt(high);
    if (to < from) return Malformed(expression, offset, "range '" + part + "' runs backwards");
    if (to - from > 1000000) return Malformed(expression, offset, "range '" + part + "' is too large");
    size_t width = low.size();
    for (int64_t n = from; n <= to; ++n) {
      std::string digits = std::to_string(n);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      values.push_back(digits);
    }
  }
  return values;
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view expression) {
  auto items = SplitTopLevel(Trim(expression));
  if (!items.ok()) return items.error();
  std::vector<std::string> hosts;
  for (const std::string& item : *items) {
    // Expand groups left to right: the first group varies slowest.
    std::vector<std::string> partial = {""};
    size_t i = 0;
    while (i < item.size()) {
      size_t open = item.find('[', i);
      std::string literal = item.substr(i, open == std::string::npos ? std::string::npos : open - i);
      for (std::string& prefix : partial) prefix += literal;
      if (open == std::string::npos) {
        // Slurm refuses text after an item's last bracket group ("n[1-2]a").
        if (i > 0 && !literal.empty()) {
          return Malformed(expression, expression.find(item) + i, "text after the last ']' ('" + literal + "')");
        }
        break;
      }
      size_t close = item.find(']', open);
      size_t offset = expression.find(item) + open;
      auto values = ExpandRanges(expression, std::string_view(item).substr(open + 1, close - open - 1), offset);
      if (!values.ok()) return values.error();
      std::vector<std::string> next;
      for (const std::string& prefix : partial) {
        for (const std::string& value : *values) next.push_back(prefix + value);
      }
      partial = std::move(next);
      i = close + 1;
    }
    hosts.insert(hosts.end(), partial.begin(), partial.end());
  }
  return hosts;
}

}  // namespace primus
