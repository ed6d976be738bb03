// For tests of the HTTP client and what is built on it: a tiny HTTP server on
// a loopback port, in a thread of the test, that answers each request with
// whatever bytes the test chooses (well-formed or not), in pieces, so that
// a client must put a response together from several reads.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/message_socket.h"
#include "io/unique_fd.h"
#include "util/strings.h"

namespace primus::testing {

struct CannedReply {
  std::vector<std::string> pieces;  // written one by one, a few ms apart
  bool hold_open = false;           // keep the connection open afterwards (a stalled server)
};

class HttpTestServer {
 public:
  // `reply` sees each request (headers and body, as received).
  explicit HttpTestServer(std::function<CannedReply(const std::string& request)> reply)
      : reply_(std::move(reply)) {
    auto listener = io::ListenForNodes(0);
    if (listener.ok()) listener_ = std::move(*listener);
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (listener_.valid() && ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port_ = ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
    }
    thread_ = std::thread([this] { Serve(); });
  }
  ~HttpTestServer() {
    stop_ = true;
    thread_.join();
  }
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  bool Wait(int fd, short events) {
    pollfd waiter{fd, events, 0};
    while (!stop_) {
      if (::poll(&waiter, 1, 10) > 0) return true;
    }
    return false;
  }

  void Serve() {
    while (Wait(listener_.get(), POLLIN)) {
      std::string peer;
      io::UniqueFd connection = io::AcceptNode(listener_.get(), &peer);
      if (!connection.valid()) continue;
      std::string request = ReadRequest(connection.get());
      {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(request);
      }
      CannedReply reply = reply_(request);
      for (const std::string& piece : reply.pieces) {
        if (!SendAll(connection.get(), piece)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
      }
      while (reply.hold_open && !stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // MSG_NOSIGNAL: a client that gave up must not SIGPIPE the test.
  static bool SendAll(int fd, const std::string& data) {
    for (size_t sent = 0; sent < data.size();) {
      ssize_t wrote = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (wrote <= 0) return false;
      sent += static_cast<size_t>(wrote);
    }
    return true;
  }

  // Headers, then Content-Length bytes of body.
  std::string ReadRequest(int fd) {
    std::string data;
    char chunk[4096];
    while (Wait(fd, POLLIN)) {
      ssize_t got = ::recv(fd, chunk, sizeof(chunk), 0);
      if (got <= 0) break;
      data.append(chunk, static_cast<size_t>(got));
      size_t end = data.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      size_t length = 0;
      size_t header = ToLower(data.substr(0, end)).find("content-length:");
      if (header != std::string::npos) length = std::stoul(data.substr(header + 15));
      if (data.size() >= end + 4 + length) break;
    }
    return data;
  }

  std::function<CannedReply(const std::string&)> reply_;
  io::UniqueFd listener_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

// A complete response with a Content-Length, in one piece.
inline CannedReply Respond(int status, const std::string& body, const std::string& content_type = "application/json") {
  return {{"HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + content_type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body}};
}

}  // namespace primus::testing
