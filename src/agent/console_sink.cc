#include "agent/console_sink.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "util/console_writer.h"

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
  // During a launch the writer's threads take it: a console nobody reads
  // drops lines instead of stopping the loop (util/console_writer.h). A
  // console that broke was said so once; nothing is formatted for it again.
  if (active_ && !console_writer::Write(fd_, std::string_view(buffer_.data(), buffer_.size()))) active_ = false;
  buffer_.Clear();
  buffer_.ReleaseIfLarge(4 << 20);
}

}  // namespace primus::agent
