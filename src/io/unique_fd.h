// Ownership of one file descriptor (closed exactly once, on destruction or
// Reset) and the full-write loop every output path needs: write(2) may write
// less than asked, or be interrupted, and callers must not care.
#pragma once

#include <cstddef>
#include <utility>

namespace primus::io {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Writes all `size` bytes, retrying short writes and EINTR. False on error
// (errno tells which); a non-blocking fd that stays full is an error (EAGAIN).
bool WriteAll(int fd, const char* data, size_t size);

// A pipe whose both ends are close-on-exec; the spawner dup2()s the child's
// end onto 0/1/2, which clears the flag there only.
struct PipeEnds {
  UniqueFd read;
  UniqueFd write;
};
bool MakePipe(PipeEnds* ends);

}  // namespace primus::io
