#include "io/message_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace primus::io {
namespace {

constexpr int kSendTimeoutS = 5;

std::string Describe(const sockaddr* address) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address->sa_family == AF_INET) {
    auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
    port = ntohs(v4->sin_port);
  } else if (address->sa_family == AF_INET6) {
    auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
      inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], host, sizeof(host));
    } else {
      inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
    }
    port = ntohs(v6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

void Tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  timeval timeout{kSendTimeoutS, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
}

}  // namespace

Result<UniqueFd> ListenForNodes(int port, bool* port_in_use, std::string_view what) {
  if (port_in_use != nullptr) *port_in_use = false;
  UniqueFd fd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  bool ipv6 = fd.valid();
  if (!ipv6) fd.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return UnavailableError(std::string("cannot create the control socket: ") + std::strerror(errno));
  int one = 1, zero = 0;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int bound;
  if (ipv6) {
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_any;
    address.sin6_port = htons(static_cast<uint16_t>(port));
    bound = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address));
  } else {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<uint16_t>(port));
    bound = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  if (bound != 0) {
    int error = errno;
    if (error == EADDRINUSE) {
      if (port_in_use != nullptr) *port_in_use = true;
      return UnavailableError("control port " + std::to_string(port) + " is already in use on this node",
                              "another job (or an earlier one still ending) holds it: choose another with "
                              "--control-port (the same on every node), or a different --master-port");
    }
    return UnavailableError("cannot bind " + std::string(what) + " " + std::to_string(port) + ": " + std::strerror(error));
  }
  if (::listen(fd.get(), 1024) != 0) {
    return UnavailableError("cannot listen on " + std::string(what) + " " + std::to_string(port) + ": " + std::strerror(errno));
  }
  return fd;
}

int BoundPort(int listen_fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

bool IsLocalAddress(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "0", &hints, &found) != 0) return false;
  bool local = false;
  for (addrinfo* entry = found; entry != nullptr && !local; entry = entry->ai_next) {
    UniqueFd fd(::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC, entry->ai_protocol));
    // Binding to port 0 of an address succeeds only where the address is ours.
    local = fd.valid() && ::bind(fd.get(), entry->ai_addr, entry->ai_addrlen) == 0;
  }
  ::freeaddrinfo(found);
  return local;
}

UniqueFd AcceptNode(int listen_fd, std::string* peer) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  int fd;
  do {
    fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&address), &length, SOCK_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return UniqueFd();
  Tune(fd);
  *peer = Describe(reinterpret_cast<sockaddr*>(&address));
  return UniqueFd(fd);
}

Result<UniqueFd> ConnectToNode(const std::string& host, int port, double timeout_s) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int status = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (status != 0) {
    return UnavailableError("cannot resolve " + host + ": " + gai_strerror(status));
  }
  std::string last_error = "no address";
  for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    UniqueFd fd(::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, entry->ai_protocol));
    if (!fd.valid()) continue;
    int connected = ::connect(fd.get(), entry->ai_addr, entry->ai_addrlen);
    if (connected != 0 && errno == EINPROGRESS) {
      pollfd waiter{fd.get(), POLLOUT, 0};
      int ready = ::poll(&waiter, 1, static_cast<int>(timeout_s * 1000));
      int error = 0;
      socklen_t length = sizeof(error);
      if (ready <= 0) {
        error = ETIMEDOUT;
      } else {
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
      }
      connected = error == 0 ? 0 : -1;
      errno = error;
    }
    if (connected == 0) {
      int flags = ::fcntl(fd.get(), F_GETFL);
      ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
      Tune(fd.get());
      ::freeaddrinfo(found);
      return fd;
    }
    last_error = std::strerror(errno);
  }
  ::freeaddrinfo(found);
  return UnavailableError(last_error);
}

MessageConnection::MessageConnection(UniqueFd fd, std::string peer, size_t max_message_bytes)
    : fd_(std::move(fd)), peer_(std::move(peer)), max_message_bytes_(max_message_bytes) {}

MessageConnection::ReadResult MessageConnection::Receive(std::vector<Json>* messages) {
  char chunk[64 * 1024];
  // Never hold more than one message's worth plus one read: a peer that
  // streams without newlines is cut off at the limit, not buffered.
  while (buffer_.size() <= max_message_bytes_) {
    size_t want = std::min(sizeof(chunk), max_message_bytes_ + 1 - buffer_.size());
    ssize_t got = ::recv(fd_.get(), chunk, want, MSG_DONTWAIT);
    if (got > 0) {
      buffer_.append(chunk, static_cast<size_t>(got));
      continue;
    }
    if (got == 0) {
      error_ = "connection closed";
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    error_ = std::strerror(errno);
    break;
  }
  size_t start = 0;
  for (size_t newline; (newline = buffer_.find('\n', start)) != std::string::npos; start = newline + 1) {
    Json message = Json::parse(buffer_.begin() + static_cast<long>(start),
                               buffer_.begin() + static_cast<long>(newline), nullptr, false);
    if (message.is_discarded() || !message.is_object()) {
      error_ = "malformed message (not a JSON object)";
      buffer_.clear();
      buffer_.shrink_to_fit();
      return ReadResult::kClosed;
    }
    if (newline - start > max_message_bytes_) {
      error_ = "message larger than " + std::to_string(max_message_bytes_) + " bytes";
      buffer_.clear();
      buffer_.shrink_to_fit();
      return ReadResult::kClosed;
    }
    messages->push_back(std::move(message));
  }
  buffer_.erase(0, start);
  if (buffer_.size() > max_message_bytes_) {
    error_ = "message larger than " + std::to_string(max_message_bytes_) + " bytes";
    buffer_.clear();
    buffer_.shrink_to_fit();
    return ReadResult::kClosed;
  }
  if (buffer_.empty() && buffer_.capacity() > sizeof(chunk)) buffer_.shrink_to_fit();
  return error_.empty() ? ReadResult::kOpen : ReadResult::kClosed;
}

bool MessageConnection::Send(const Json& message) {
  if (!fd_.valid()) return false;
  std::string text = message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  size_t sent = 0;
  while (sent < text.size()) {
    ssize_t wrote = ::send(fd_.get(), text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (wrote > 0) {
      sent += static_cast<size_t>(wrote);
      continue;
    }
    if (wrote < 0 && errno == EINTR) continue;
    error_ = wrote < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
                 ? "the peer did not read for " + std::to_string(kSendTimeoutS) + " s"
                 : std::string(std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace primus::io
