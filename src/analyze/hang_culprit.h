// Which rank a hung job's ranks are waiting for, from their stacks and, on
// NCCL, their flight recorder dumps (analyze/flight_record.h). Each
// rank's main-thread Python stack (faulthandler's text, from primus-cli's
// stack dumper, or py-spy's) says whether it is inside a collective of
// torch.distributed (all_reduce, barrier, ...) and which, or where it is
// instead. The verdict:
//   - some ranks inside collective X, others in none: those others are the
//     culprits ("rank 2 is not in the all_reduce the others wait in: it is
//     at train.py:20 in wait_for_peer");
//   - ranks inside different collectives: the fewest in one are named;
//   - all inside the same one, or none inside any: the stacks do not single
//     one out; then the flight records may: the rank behind in a process
//     group's sequence of collectives (it never issued #42, which the others
//     wait in), or the one whose pending collective differs (another op or
//     other sizes at the same sequence number);
//   - where nothing singles one out, the verdict says what the evidence shows.
// Judging works on places (what each rank's evidence says), so node 0 can
// judge the places every node sent it (job/control_protocol.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/flight_record.h"

namespace primus::analyze {

struct RankStacks {
  int rank = 0;
  std::string host;
  std::string text;  // the dump's text
  std::optional<FlightRecord> flight;  // its flight recorder dump, when one was read
  int local_rank = -1;                 // -1: unknown
  std::string gpu;                     // "GPU 3 (0000:0c:00.0)" (platform::GpuOfLocalRank); "" without one
  std::optional<int64_t> last_step;    // the last step it reported
};

// Where one rank's main thread is.
struct RankPlace {
  int rank = 0;
  std::string host;
  std::string collective;  // "all_reduce", ... ; "" when in none
  std::string frame;       // its innermost frame outside Python's and torch's own files: "train.py:20 in wait_for_peer"
  bool readable = false;   // a stack was found in the text
  int local_rank = -1;
  std::string gpu;  // "" without one
  std::optional<int64_t> last_step;
  bool has_flight_record = false;
  std::vector<GroupProgress> groups;  // from its flight record
};

struct HangVerdict {
  std::vector<RankPlace> places;
  std::vector<int> culprits;  // empty: the evidence does not single one out
  std::string summary;        // one line for the banner and the log
  // One line per culprit: "rank 2: host node1, local rank 2, GPU 2
  // (0000:1b:00.0), last step 41, at train.py:20 in wait_for_peer".
  std::vector<std::string> details;
  std::string evidence;  // "stacks", "flight records" or "stacks and flight records": what was read
};

RankPlace PlaceOf(const RankStacks& stacks);
HangVerdict JudgePlaces(std::vector<RankPlace> places);
HangVerdict JudgeHang(const std::vector<RankStacks>& ranks);
// The verdict as a file's text: the summary, the details, each rank's place.
std::string FormatVerdict(const HangVerdict& verdict);

}  // namespace primus::analyze
