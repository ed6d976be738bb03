// The one event loop type: a thin epoll set. A loop that waits on several
// descriptors (a signal channel, a timerfd, a child's pipes, a stop pipe)
// registers each with a 64-bit tag saying what it is, and blocks in one
// epoll_wait until something happens or its deadline comes: the node
// agent's supervisor, RunCommand, the srun, ssh and container clients.
// Take a descriptor out (Remove) before closing it.
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <vector>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::io {

class EventPoller {
 public:
  static Result<EventPoller> Create();

  // Level-triggered readability (EPOLLIN; hang-up and errors come along).
  Status Add(int fd, uint64_t tag);
  // Switches a watched fd to writability (EPOLLOUT) or back to readability.
  Status WatchWritable(int fd, uint64_t tag, bool writable);
  void Remove(int fd);
  // Waits up to `timeout_ms` (-1: forever) and returns the ready events;
  // empty on timeout or EINTR.
  const std::vector<epoll_event>& Wait(int timeout_ms = -1);

 private:
  io::UniqueFd epoll_fd_;
  std::vector<epoll_event> ready_;
};

}  // namespace primus::io
