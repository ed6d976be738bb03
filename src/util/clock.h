// Seconds as a double, the two clocks the tree reads: the wall clock (for
// timestamps a person or another host reads: epoch seconds) and the
// monotonic clock (for intervals and deadlines: no clock step moves it).
#pragma once

namespace primus {

double WallSeconds();       // CLOCK_REALTIME, seconds since the epoch
double MonotonicSeconds();  // CLOCK_MONOTONIC

}  // namespace primus
