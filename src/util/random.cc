#include "util/random.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace primus {

namespace {

// Fills `buffer` from the kernel; how many bytes it got.
size_t KernelRandomBytes(unsigned char* buffer, size_t bytes) {
  size_t filled = 0;
  while (filled < bytes) {
    ssize_t got = ::getrandom(buffer + filled, bytes - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    filled += static_cast<size_t>(got);
  }
  if (filled < bytes) {
    // No getrandom (an old kernel): the kernel's pool through the device.
    int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && filled < bytes) {
      ssize_t got = ::read(fd, buffer + filled, bytes - filled);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      filled += static_cast<size_t>(got);
    }
    if (fd >= 0) ::close(fd);
  }
  return filled;
}

std::string Hex(const unsigned char* buffer, size_t bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (size_t i = 0; i < bytes; ++i) {
    out.push_back(kDigits[buffer[i] >> 4]);
    out.push_back(kDigits[buffer[i] & 15]);
  }
  return out;
}

}  // namespace

Result<std::string> NewJobToken() {
  unsigned char buffer[16] = {};
  if (KernelRandomBytes(buffer, sizeof(buffer)) < sizeof(buffer)) {
    return UnavailableError("the kernel gives no random bytes (getrandom, /dev/urandom) for the job token",
                            "set PRIMUS_JOB_TOKEN yourself (32 random hex characters) on every node");
  }
  return Hex(buffer, sizeof(buffer));
}

std::string RandomHex(size_t bytes) {
  unsigned char buffer[64] = {};
  bytes = std::min(bytes, sizeof(buffer));
  size_t filled = KernelRandomBytes(buffer, bytes);
  if (filled < bytes) {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t mix = static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(getpid()) << 32) ^
                   static_cast<uint64_t>(now.tv_sec);
    for (size_t i = filled; i < bytes; ++i) buffer[i] = static_cast<unsigned char>(mix >> ((i % 8) * 8));
  }
  return Hex(buffer, bytes);
}

}  // namespace primus
