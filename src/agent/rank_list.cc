#include "agent/rank_list.h"

#include <algorithm>
#include <string>

#include "util/strings.h"

namespace primus::agent {

Result<std::vector<int>> ParseRankList(std::string_view text) {
  std::vector<int> ranks;
  if (Trim(text).empty()) return ranks;
  for (const std::string& raw : Split(text, ',')) {
    std::string item(Trim(raw));
    size_t dash = item.find('-', 1);
    std::optional<int64_t> first = ParseInt(item.substr(0, dash));
    std::optional<int64_t> last = dash == std::string::npos ? first : ParseInt(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last - *first > 1000000) {
      return UsageError("bad rank list '" + std::string(text) + "': '" + item + "' is not a rank or a range A-B",
                        "write ranks like 0,8-15");
    }
    for (int64_t rank = *first; rank <= *last; ++rank) ranks.push_back(static_cast<int>(rank));
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

}  // namespace primus::agent
