// Seconds from now until a steady-clock deadline (negative once it has
// passed): what a blocking call with a timeout in seconds is handed when
// several calls share one deadline.
#pragma once

#include <chrono>

namespace primus {

inline double SecondsLeft(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
}

}  // namespace primus
