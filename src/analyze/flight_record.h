// PyTorch's NCCL flight recorder, read back: the dump each rank writes (on
// a collective's timeout, or when its debug pipe is written; primus-cli
// turns both on, docs/agent.md) holds the last collectives the rank issued,
// each with its process group, its sequence number in that group, its op,
// its sizes, its state (scheduled, started, completed) and the Python frames
// that issued it. The dump is a pickle (or, from newer releases, JSON) of
// the documented shape:
//   {version, pg_config: {pg: {name, desc, ranks}}, pg_status: {pg: {last_enqueued_collective, ...}},
//    entries: [{pg_id, process_group: (name, desc), collective_seq_id, p2p_seq_id, profiling_name,
//               input_sizes, state, is_p2p, frames: [{name, filename, line}], ...}]}
// Of it we keep, per process group, how far the rank got and the first
// collective it has not completed: enough to see which rank is behind in a
// group's sequence or inside a different collective than the rest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::analyze {

// One rank's progress in one process group.
struct GroupProgress {
  std::string group;             // "0 (default_pg)": the group's name and description
  int64_t last_enqueued = -1;    // the newest collective sequence number it issued; -1 none
  int64_t last_completed = -1;   // the newest one it saw complete
  // The oldest collective not completed (what the rank waits in): its
  // sequence number (-1: none pending), op ("all_reduce"), sizes and state.
  int64_t pending_seq = -1;
  std::string pending_op;
  std::string pending_sizes;  // "[[3, 4]]"
  std::string pending_state;  // "scheduled" or "started"
  std::string pending_frame;  // the user's frame that issued it: "train.py:20 in step"
};

struct FlightRecord {
  std::string version;
  std::vector<GroupProgress> groups;  // by group name
};

// The most a dump file may hold (2000 entries with frames are a few MiB).
inline constexpr size_t kMaxFlightRecordBytes = 64 << 20;

// Reads one dump (pickle or JSON); `source` names it in errors.
Result<FlightRecord> ReadFlightRecord(std::string_view bytes, const std::string& source);

}  // namespace primus::analyze
