// Megatron-LM's timer block (megatron/core/timers.py, the same from
// core_v0.12 to core_v0.19), which its last rank prints after each training
// log line when --timing-log-level is 1 or 2, in milliseconds per iteration,
// in one of three shapes (--timing-log-option):
//
//   minmax (default)  "(min, max) time across ranks (ms):"
//                     "    forward-backward ...............: (812.34, 845.67)"
//   max               "max time across ranks (ms):"
//                     "    forward-backward ...............: 845.67"
//   all               "times across ranks (ms):"
//                     "  forward-backward:"
//                     "     rank  0: 812.34"
//
// Read one line at a time; the block ends at the first line of another
// shape. Each timer becomes a StepTimePart in seconds: the slowest rank's
// figure, with the fastest's (minmax, all) and the slowest rank (all).
// Bounded: at most kMaxStepTimeParts timers; ranks beyond 2^24 and values
// that are not finite milliseconds are ignored.
#pragma once

#include <string_view>
#include <vector>

#include "telemetry/node_sample.h"

namespace primus::telemetry {

class MegatronTimerBlock {
 public:
  // Whether `line` is a block's first line; it starts a new block (an open
  // one is dropped: take it first).
  bool Start(std::string_view line);
  bool open() const { return shape_ != Shape::kNone; }
  // Whether `line` belongs to the open block (and was taken in).
  bool Feed(std::string_view line);
  // Ends the block: its parts (empty when it named none).
  std::vector<StepTimePart> Finish();

 private:
  enum class Shape { kNone, kMinMax, kMax, kAll };
  StepTimePart* PartNamed(std::string_view name);

  Shape shape_ = Shape::kNone;
  std::vector<StepTimePart> parts_;
  StepTimePart* current_ = nullptr;  // all: the timer whose rank lines follow
};

}  // namespace primus::telemetry
