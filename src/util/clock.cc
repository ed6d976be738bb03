#include "util/clock.h"

#include <time.h>

namespace primus {
namespace {

double SecondsOf(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

}  // namespace

double WallSeconds() { return SecondsOf(CLOCK_REALTIME); }

double MonotonicSeconds() { return SecondsOf(CLOCK_MONOTONIC); }

}  // namespace primus
