// Which output streams of which local ranks a setting names, written as
// torchrun writes --redirects and --tee: one digit for every local rank
// ("3"), or per local rank ("0:1,1:2"; a rank not listed gets 0). The digit
// is a bit set: 1 stdout, 2 stderr, 3 both, 0 neither.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "util/error.h"

namespace primus::agent {

inline constexpr int kStdoutStream = 1;
inline constexpr int kStderrStream = 2;

struct StreamSelection {
  int all = 0;                         // the single-digit form
  std::map<int, int> by_local_rank;    // the per-rank form (then `all` is 0)

  // The streams selected for one local rank (a bit set of kStdoutStream, kStderrStream).
  int For(int local_rank) const;
  bool empty() const { return all == 0 && by_local_rank.empty(); }
};

// "" and "0" select nothing. UsageError naming `setting` (e.g. "--redirects")
// for anything else than a digit 0-3 or a list of LOCAL_RANK:DIGIT.
Result<StreamSelection> ParseStreamSelection(std::string_view text, std::string_view setting);

// The selection in the form it was written ("3", "0:1,1:2"); "0" when empty.
std::string FormatStreamSelection(const StreamSelection& selection);

}  // namespace primus::agent
