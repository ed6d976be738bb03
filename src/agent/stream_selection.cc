#include "agent/stream_selection.h"

#include <string>
#include <vector>

#include "util/strings.h"

namespace primus::agent {
namespace {

std::optional<int> Digit(std::string_view text) {
  if (text.size() != 1 || text[0] < '0' || text[0] > '3') return std::nullopt;
  return text[0] - '0';
}

}  // namespace

int StreamSelection::For(int local_rank) const {
  if (by_local_rank.empty()) return all;
  auto found = by_local_rank.find(local_rank);
  return found == by_local_rank.end() ? 0 : found->second;
}

Result<StreamSelection> ParseStreamSelection(std::string_view text, std::string_view setting) {
  StreamSelection selection;
  std::string value(Trim(text));
  if (value.empty()) return selection;
  auto bad = [&](const std::string& why) {
    return UsageError(std::string(setting) + " '" + std::string(text) + "': " + why,
                      "write one digit for every local rank (1 stdout, 2 stderr, 3 both, 0 neither), e.g. " +
                          std::string(setting) + " 3, or per local rank, e.g. " + std::string(setting) + " 0:3,1:2");
  };
  if (std::optional<int> digit = Digit(value)) {
    selection.all = *digit;
    return selection;
  }
  if (value.find(':') == std::string::npos) return bad("not a digit 0-3");
  for (const std::string& item : Split(value, ',')) {
    size_t colon = item.find(':');
    if (colon == std::string::npos) return bad("'" + item + "' is not LOCAL_RANK:DIGIT");
    std::optional<int64_t> rank = ParseInt(Trim(item.substr(0, colon)));
    std::optional<int> digit = Digit(Trim(item.substr(colon + 1)));
    if (!rank || *rank < 0 || *rank > 1 << 20) return bad("'" + item + "' does not start with a local rank");
    if (!digit) return bad("'" + item + "' does not end with a digit 0-3");
    selection.by_local_rank[static_cast<int>(*rank)] = *digit;
  }
  return selection;
}

std::string FormatStreamSelection(const StreamSelection& selection) {
  if (selection.by_local_rank.empty()) return std::to_string(selection.all);
  std::vector<std::string> items;
  for (const auto& [rank, streams] : selection.by_local_rank) {
    items.push_back(std::to_string(rank) + ":" + std::to_string(streams));
  }
  return Join(items, ",");
}

}  // namespace primus::agent
