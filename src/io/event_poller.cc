#include "io/event_poller.h"

#include <errno.h>

#include <cstring>
#include <string>

namespace primus::io {

Result<EventPoller> EventPoller::Create() {
  EventPoller poller;
  poller.epoll_fd_.Reset(epoll_create1(EPOLL_CLOEXEC));
  if (!poller.epoll_fd_.valid()) {
    return UnavailableError(std::string("cannot create an epoll set: ") + std::strerror(errno));
  }
  poller.ready_.reserve(64);
  return poller;
}

Status EventPoller::Add(int fd, uint64_t tag) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = tag;
  if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
    return UnavailableError(std::string("cannot watch a file descriptor: ") + std::strerror(errno));
  }
  return Status::Ok();
}

Status EventPoller::WatchWritable(int fd, uint64_t tag, bool writable) {
  epoll_event event{};
  event.events = writable ? EPOLLOUT : EPOLLIN;
  event.data.u64 = tag;
  if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &event) != 0) {
    return UnavailableError(std::string("cannot watch a file descriptor: ") + std::strerror(errno));
  }
  return Status::Ok();
}

void EventPoller::Remove(int fd) { epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr); }

const std::vector<epoll_event>& EventPoller::Wait(int timeout_ms) {
  ready_.resize(64);
  int count = epoll_wait(epoll_fd_.get(), ready_.data(), static_cast<int>(ready_.size()), timeout_ms);
  ready_.resize(count > 0 ? static_cast<size_t>(count) : 0);
  return ready_;
}

}  // namespace primus::io
