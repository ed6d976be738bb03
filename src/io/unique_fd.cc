#include "io/unique_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace primus::io {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

bool MakePipe(PipeEnds* ends) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  ends->read.Reset(fds[0]);
  ends->write.Reset(fds[1]);
  return true;
}

}  // namespace primus::io
