#include "agent/console_sink.h"

#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>

#include "util/console_writer.h"
#include "util/log.h"
#include "util/progress_line.h"

namespace primus::agent {

ConsoleSink::ConsoleSink(int fd) : fd_(fd) {
  struct stat info;
  if (fd < 0 || ::fstat(fd, &info) != 0) {
    active_ = false;
  } else if (S_ISCHR(info.st_mode) && info.st_rdev == makedev(1, 3)) {
    active_ = false;  // /dev/null
  }
}

void ConsoleSink::Flush() {
  if (active_ && console_writer::Broken(fd_)) {
    active_ = false;  // the writer said so once
  }
  if (!active_) {
    buffer_.Clear();
    return;
  }
  if (console_writer::Started()) {
    // A launch: the writer thread takes it, and a console that is not read
    // drops lines instead of stopping the loop (util/console_writer.h).
    console_writer::Write(fd_, std::string_view(buffer_.data(), buffer_.size()));
    buffer_.Clear();
    buffer_.ReleaseIfLarge(4 << 20);
    return;
  }
  LiftProgressLine lift(fd_);  // the workers' output goes above a progress line on the same terminal
  const char* data = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, data, left);
    if (n > 0) {
      data += n;
      left -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {  // someone handed us a non-blocking stdout
      pollfd waiter{fd_, POLLOUT, 0};
      ::poll(&waiter, 1, -1);
      continue;
    }
    log::Warn("console output stopped: cannot write to stdout ({}); the log files keep everything",
              std::strerror(errno));
    active_ = false;
    break;
  }
  buffer_.Clear();
  buffer_.ReleaseIfLarge(4 << 20);
}

}  // namespace primus::agent
