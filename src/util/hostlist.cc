#include "util/hostlist.h"

#include <algorithm>
#include <limits>

#include "util/strings.h"

namespace primus {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }
uint64_t SaturatingMultiply(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

// A long expression is shown cut in messages (SLURM_JOB_NODELIST may be long).
std::string Shown(std::string_view expression) {
  constexpr size_t kShown = 120;
  if (expression.size() <= kShown) return std::string(expression);
  return std::string(expression.substr(0, kShown)) + "... (" + std::to_string(expression.size()) + " characters)";
}

Error Malformed(std::string_view expression, size_t position, const std::string& what) {
  return UsageError("host list '" + Shown(expression) + "': " + what + " at character " + std::to_string(position + 1),
                    "write hosts as in Slurm: node[01-04,07],gpu-a[1-2]");
}

struct Piece {
  std::string_view text;
  size_t offset = 0;  // in the whole expression
};

// Splits `expression`, which starts at `base` in `whole`, on commas that are
// not inside brackets.
Result<std::vector<Piece>> SplitTopLevel(std::string_view whole, std::string_view expression, size_t base) {
  std::vector<Piece> items;
  size_t start = 0;
  int depth = 0;
  auto add = [&](size_t end) {
    if (end > start) items.push_back({expression.substr(start, end - start), base + start});
  };
  for (size_t i = 0; i < expression.size(); ++i) {
    char c = expression[i];
    if (c == '[') {
      if (depth > 0) return Malformed(whole, base + i, "'[' inside brackets");
      ++depth;
    } else if (c == ']') {
      if (depth == 0) return Malformed(whole, base + i, "']' without '['");
      --depth;
    } else if (c == ',' && depth == 0) {
      add(i);
      start = i + 1;
    }
  }
  if (depth != 0) return Malformed(whole, base + expression.size() - 1, "unclosed '['");
  add(expression.size());
  return items;
}

}  // namespace

Result<Hostlist> Hostlist::Parse(std::string_view whole) {
  std::string_view expression = Trim(whole);
  size_t base = expression.empty() ? 0 : static_cast<size_t>(expression.data() - whole.data());
  auto malformed = [&](size_t position, const std::string& what) { return Malformed(whole, position, what); };
  auto pieces = SplitTopLevel(whole, expression, base);
  if (!pieces.ok()) return pieces.error();
  Hostlist list;
  for (const Piece& piece : *pieces) {
    Item item;
    item.size = 1;
    std::string_view text = piece.text;
    size_t i = 0;
    while (true) {
      size_t open = text.find('[', i);
      std::string_view literal = text.substr(i, open == std::string_view::npos ? std::string_view::npos : open - i);
      if (open == std::string_view::npos) {
        // Slurm refuses text after an item's last bracket group ("n[1-2]a").
        if (i > 0 && !literal.empty()) {
          return malformed(piece.offset + i, "text after the last ']' ('" + std::string(literal) + "')");
        }
        item.literals.emplace_back(literal);
        break;
      }
      item.literals.emplace_back(literal);
      size_t close = text.find(']', open);  // SplitTopLevel checked that it exists
      std::string_view body = text.substr(open + 1, close - open - 1);
      size_t offset = piece.offset + open;
      Group group;
      size_t part_start = 0;
      while (true) {
        size_t comma = body.find(',', part_start);
        std::string_view part = body.substr(part_start, comma == std::string_view::npos ? std::string_view::npos
                                                                                        : comma - part_start);
        size_t dash = part.find('-');
        std::string_view low = part.substr(0, dash);
        std::string_view high = dash == std::string_view::npos ? low : part.substr(dash + 1);
        auto is_number = [](std::string_view s) {
          return !s.empty() && s.size() < 19 &&
                 std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        };
        if (!is_number(low) || !is_number(high)) {
          return malformed(offset, "'" + std::string(part) + "' is not a number or a range");
        }
        Range range{static_cast<uint64_t>(*ParseInt(low)), static_cast<uint64_t>(*ParseInt(high)), low.size()};
        if (range.to < range.from) return malformed(offset, "range '" + std::string(part) + "' runs backwards");
        if (range.to - range.from > 1000000) return malformed(offset, "range '" + std::string(part) + "' is too large");
        group.starts.push_back(group.size);
        group.size = SaturatingAdd(group.size, range.to - range.from + 1);
        group.ranges.push_back(range);
        if (comma == std::string_view::npos) break;
        part_start = comma + 1;
      }
      item.size = SaturatingMultiply(item.size, group.size);
      item.groups.push_back(std::move(group));
      i = close + 1;
    }
    list.size_ = SaturatingAdd(list.size_, item.size);
    list.items_.push_back(std::move(item));
  }
  return list;
}

std::string Hostlist::ItemHost(const Item& item, uint64_t index) {
  // Mixed radix, the last group varying fastest.
  std::vector<uint64_t> digits(item.groups.size());
  for (size_t g = item.groups.size(); g-- > 0;) {
    digits[g] = index % item.groups[g].size;
    index /= item.groups[g].size;
  }
  std::string host = item.literals[0];
  for (size_t g = 0; g < item.groups.size(); ++g) {
    const Group& group = item.groups[g];
    // The range holding the digit: the last one starting at or before it.
    size_t r = static_cast<size_t>(std::upper_bound(group.starts.begin(), group.starts.end(), digits[g]) -
                                   group.starts.begin()) - 1;
    const Range& range = group.ranges[r];
    std::string number = std::to_string(range.from + (digits[g] - group.starts[r]));
    if (number.size() < range.width) number.insert(0, range.width - number.size(), '0');
    host += number;
    host += item.literals[g + 1];
  }
  return host;
}

std::string Hostlist::Host(uint64_t index) const {
  for (const Item& item : items_) {
    if (index < item.size) return ItemHost(item, index);
    index -= item.size;
  }
  return "";
}

std::vector<std::string> Hostlist::All() const {
  std::vector<std::string> hosts;
  hosts.reserve(static_cast<size_t>(std::min<uint64_t>(size_, kMaxExpandedHosts)));
  for (const Item& item : items_) {
    for (uint64_t i = 0; i < item.size; ++i) hosts.push_back(ItemHost(item, i));
  }
  return hosts;
}

Result<std::vector<std::string>> ExpandHostlist(std::string_view expression) {
  Result<Hostlist> list = Hostlist::Parse(expression);
  if (!list.ok()) return list.error();
  if (list->size() > kMaxExpandedHosts) {
    std::string count = list->size() == kSaturated ? "more than 2^64" : std::to_string(list->size());
    return UsageError("host list '" + Shown(expression) + "' names " + count + " hosts, more than the " +
                          std::to_string(kMaxExpandedHosts) + " that can be listed",
                      "check the expression: each [a-b] group multiplies the hosts of the others");
  }
  return list->All();
}

Result<std::string> FirstHost(std::string_view expression) {
  Result<Hostlist> list = Hostlist::Parse(expression);
  if (!list.ok()) return list.error();
  if (list->empty()) {
    return UsageError("host list '" + Shown(expression) + "' names no host", "write hosts as in Slurm: node[01-04,07]");
  }
  return list->Host(0);
}

}  // namespace primus
