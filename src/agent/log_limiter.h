// Keeps a noisy peer from flooding the agent's log: at most `burst` lines per
// `window_s`, then silence until the window ends, when the next line says how
// many were held back. Used for what strangers on the control port cause
// (refused and dropped connections), which an operator must see once, not a
// million times.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "agent/deadline_timer.h"

namespace primus::agent {

class LogLimiter {
 public:
  LogLimiter(size_t burst, double window_s) : burst_(burst), window_(Seconds(window_s)) {}

  // nullopt: stay silent. Otherwise log the line, followed by the returned
  // suffix ("" or " (and 12 more like it in the last 10 s)").
  std::optional<std::string> Admit(SteadyTime now);
  size_t suppressed() const { return suppressed_; }
  // The count of lines held back since the last one logged, now reset: for a
  // closing "(N more were not logged)" when nothing else will be logged.
  size_t TakeSuppressed() {
    size_t count = suppressed_;
    suppressed_ = 0;
    return count;
  }

 private:
  size_t burst_;
  SteadyClock::duration window_;
  SteadyTime window_start_{};
  bool started_ = false;
  size_t in_window_ = 0;
  size_t suppressed_ = 0;
};

}  // namespace primus::agent
