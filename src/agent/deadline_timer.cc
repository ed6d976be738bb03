#include "agent/deadline_timer.h"

#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace primus::agent {

Result<DeadlineTimer> DeadlineTimer::Create() {
  DeadlineTimer timer;
  timer.fd_.Reset(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!timer.fd_.valid()) {
    return UnavailableError(std::string("cannot create a timerfd: ") + std::strerror(errno));
  }
  return timer;
}

void DeadlineTimer::ArmAt(std::optional<SteadyTime> deadline) {
  if (deadline == armed_) return;
  armed_ = deadline;
  itimerspec spec{};
  if (deadline) {
    auto since_epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline->time_since_epoch()).count();
    if (since_epoch <= 0) since_epoch = 1;  // 0 would disarm
    spec.it_value.tv_sec = static_cast<time_t>(since_epoch / 1000000000);
    spec.it_value.tv_nsec = static_cast<long>(since_epoch % 1000000000);
  }
  timerfd_settime(fd_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
}

void DeadlineTimer::Acknowledge() {
  uint64_t expirations;
  while (::read(fd_.get(), &expirations, sizeof(expirations)) < 0 && errno == EINTR) {
  }
  armed_.reset();
}

SteadyClock::duration Seconds(double seconds) {
  if (!(seconds > 0)) return SteadyClock::duration::zero();
  if (seconds > 1e9) seconds = 1e9;  // ~31 years: "never" without overflow
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace primus::agent
