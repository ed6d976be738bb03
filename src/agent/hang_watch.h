// The hang watchdog's bookkeeping. A worker is alive while it prints or
// touches its heartbeat file (PRIMUS_HEARTBEAT_FILE, e.g. once per step); it
// is hung when it did neither for hang_timeout seconds.
//
// Nothing polls: output only records a time (no syscall), the supervisor arms
// its timer at NextDeadline() (the earliest moment anyone could be hung), and
// only when that deadline passes are the heartbeat files' mtimes read, which
// either proves activity (the deadline moves) or confirms the hang.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/deadline_timer.h"

namespace primus::agent {

class HangWatch {
 public:
  explicit HangWatch(double timeout_s) : timeout_(Seconds(timeout_s)), enabled_(timeout_s > 0) {}

  bool enabled() const { return enabled_; }
  void Track(size_t worker, std::string heartbeat_file, SteadyTime now);
  void Untrack(size_t worker);
  void NoteOutput(size_t worker, SteadyTime now) {
    if (enabled_ && worker < entries_.size()) entries_[worker].last_activity = now;
  }
  std::optional<SteadyTime> NextDeadline() const;
  // Workers silent for the whole timeout, heartbeat files included.
  std::vector<size_t> CollectHung(SteadyTime now);

 private:
  struct Entry {
    bool tracked = false;
    std::string heartbeat_file;
    SteadyTime last_activity;
  };

  SteadyClock::duration timeout_;
  bool enabled_;
  std::vector<Entry> entries_;
};

}  // namespace primus::agent
