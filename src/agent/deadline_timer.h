// One timerfd carrying the supervisor's next deadline (the SIGKILL after the
// grace, the earliest possible hang, the end of a restart backoff). The loop
// re-arms it with the earliest pending deadline before each wait, so the agent
// sleeps until exactly that moment and wakes for nothing else.
#pragma once

#include <chrono>
#include <optional>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::agent {

using SteadyClock = std::chrono::steady_clock;  // CLOCK_MONOTONIC on Linux
using SteadyTime = SteadyClock::time_point;

class DeadlineTimer {
 public:
  static Result<DeadlineTimer> Create();

  int fd() const { return fd_.get(); }
  // Fires once at `deadline` (at once when it is past); nullopt disarms.
  void ArmAt(std::optional<SteadyTime> deadline);
  // Clears the readable state after it fired.
  void Acknowledge();

 private:
  io::UniqueFd fd_;
  std::optional<SteadyTime> armed_;
};

// Seconds as a steady-clock duration, saturating instead of overflowing.
SteadyClock::duration Seconds(double seconds);

}  // namespace primus::agent
