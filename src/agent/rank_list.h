// Rank lists as users write them for the console filter: "0", "0,3",
// "0,8-15". Parsed up front so that a typo is a usage error, not a silent
// empty console.
#pragma once

#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::agent {

// Sorted, without duplicates; "" is the empty list. UsageError naming the bad
// item otherwise.
Result<std::vector<int>> ParseRankList(std::string_view text);

}  // namespace primus::agent
