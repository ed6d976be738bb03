// Which rank a hung job's ranks are waiting for, from their stacks: each
// rank's main-thread Python stack (faulthandler's text, from primus-cli's
// stack dumper, or py-spy's) says whether it is inside a collective of
// torch.distributed (all_reduce, barrier, ...) and which, or where it is
// instead. The verdict:
//   - some ranks inside collective X, others in none: those others are the
//     culprits ("rank 2 is not in the all_reduce the others wait in: it is
//     at train.py:20 in wait_for_peer");
//   - ranks inside different collectives: the fewest in one are named;
//   - all inside the same one, or none inside any: the stacks do not single
//     one out, and the verdict says what they show.
#pragma once

#include <string>
#include <vector>

namespace primus::analyze {

struct RankStacks {
  int rank = 0;
  std::string host;
  std::string text;  // the dump's text
};

// Where one rank's main thread is.
struct RankPlace {
  int rank = 0;
  std::string host;
  std::string collective;  // "all_reduce", ... ; "" when in none
  std::string frame;       // its innermost frame outside Python's and torch's own files: "train.py:20 in wait_for_peer"
  bool readable = false;   // a stack was found in the text
};

struct HangVerdict {
  std::vector<RankPlace> places;
  std::vector<int> culprits;  // empty: the stacks do not single one out
  std::string summary;        // one line for the banner and the log
};

RankPlace PlaceOf(const RankStacks& stacks);
HangVerdict JudgeHang(const std::vector<RankStacks>& ranks);

}  // namespace primus::analyze
