#include "agent/line_stamp.h"

#include <time.h>

namespace primus::agent {

std::string_view LineStamp::Now() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return Format(now);
}

std::string_view LineStamp::Format(const timespec& when) {
  if (when.tv_sec != cached_second_) {
    tm local;
    localtime_r(&when.tv_sec, &local);
    strftime(text_, sizeof(text_), "%Y-%m-%dT%H:%M:%S.", &local);
    cached_second_ = when.tv_sec;
  }
  long micros = when.tv_nsec / 1000;
  for (int i = 25; i >= 20; --i) {
    text_[i] = static_cast<char>('0' + micros % 10);
    micros /= 10;
  }
  text_[kLength] = '\0';
  seconds_ = static_cast<double>(when.tv_sec) + static_cast<double>(when.tv_nsec) / 1e9;
  return {text_, kLength};
}

}  // namespace primus::agent
