#include "agent/log_limiter.h"

#include <fmt/format.h>

namespace primus::agent {

std::optional<std::string> LogLimiter::Admit(SteadyTime now) {
  if (!started_ || now >= window_start_ + window_) {
    started_ = true;
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ >= burst_) {
    ++suppressed_;
    return std::nullopt;
  }
  ++in_window_;
  std::string suffix;
  if (suppressed_ > 0) {
    suffix = fmt::format(" (and {} more like it were not logged)", suppressed_);
    suppressed_ = 0;
  }
  return suffix;
}

}  // namespace primus::agent
