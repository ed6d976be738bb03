// The timestamp written before every line of a rank's log file,
// "2026-11-22T10:00:00.123456" in local time. The clock is read once per read
// batch (all lines of one read(2) share it) and the date part is formatted once
// per second, so the per-line cost is one 26-byte copy.
#pragma once

#include <sys/time.h>

#include <string_view>

namespace primus::agent {

class LineStamp {
 public:
  static constexpr size_t kLength = 26;

  // Reads CLOCK_REALTIME and returns the formatted stamp (valid until the
  // next call).
  std::string_view Now();
  // Formats a given time (for tests and for deterministic callers).
  std::string_view Format(const timespec& when);
  // Seconds since the epoch of the last Now()/Format().
  double seconds() const { return seconds_; }

 private:
  time_t cached_second_ = -1;
  double seconds_ = 0;
  char text_[kLength + 1] = {};
};

}  // namespace primus::agent
