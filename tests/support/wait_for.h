// Test support: poll a condition until it holds or time runs out, for tests
// that wait on other processes (a worker gone, a job left the queue, a line
// in a log). Polls every 10 ms: fine enough to time what the tests time, and
// cheap on a busy machine. SecondsSince times what a test waited for.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace primus::testing {

// True as soon as `condition()` holds; false when it still does not after
// `seconds` (it is asked once more at the end).
inline bool WaitFor(const std::function<bool()>& condition, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

// Seconds from `start` to now, on the steady clock.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace primus::testing
