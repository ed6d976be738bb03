// TCP connections that carry newline-delimited JSON messages: a listening
// socket on every local address (IPv4 and IPv6), connecting to a host by name
// (resolved forward only, never reverse), and reading and writing whole
// messages. The node agents' control channel (job/control_protocol.h) and
// preflight's node exchange run over it. Reads never block — the caller's
// epoll loop says when a connection is readable; writes are small and block
// at most a few seconds before the peer is given up as lost.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::io {

using Json = nlohmann::json;

// A listening socket on `port` of every local address; a port in use is an
// UnavailableError naming it (and sets *port_in_use when given). `what` names
// the port in the errors (the metrics server listens here too).
Result<UniqueFd> ListenForNodes(int port, bool* port_in_use = nullptr, std::string_view what = "control port");

// The port a listening socket is bound to.
int BoundPort(int listen_fd);

// Whether `host` (a name or an address, resolved forward) is an address of
// this machine: one a socket can be bound to here.
bool IsLocalAddress(const std::string& host);

// Accepts one pending connection; an invalid fd when none is pending.
// `peer` receives "10.0.0.2:51234".
UniqueFd AcceptNode(int listen_fd, std::string* peer);

// One connection attempt to host:port within `timeout_s`; the error text
// says why ("connection refused", "no route to host", "unknown host").
Result<UniqueFd> ConnectToNode(const std::string& host, int port, double timeout_s);

// The longest message an authenticated node may send: a failure carries a
// traceback and the last lines of a log; 4 MiB is plenty.
inline constexpr size_t kMaxMessageBytes = 4 << 20;
// The longest message a connection that has not introduced itself may send
// (a hello is a few hundred bytes): what an unauthenticated peer can make
// node 0 hold.
inline constexpr size_t kMaxHelloBytes = 16 << 10;

class MessageConnection {
 public:
  MessageConnection(UniqueFd fd, std::string peer, size_t max_message_bytes = kMaxMessageBytes);
  // Authenticated: from now on, messages up to kMaxMessageBytes.
  void set_max_message_bytes(size_t bytes) { max_message_bytes_ = bytes; }

  int fd() const { return fd_.get(); }
  const std::string& peer() const { return peer_; }

  enum class ReadResult { kOpen, kClosed };
  // Reads what has arrived and appends every complete message. kClosed when
  // the peer closed the connection, on a socket error, or on a malformed or
  // oversized message (error() says which).
  ReadResult Receive(std::vector<Json>* messages);
  // False when the peer is gone or did not take the message within a few seconds.
  bool Send(const Json& message);
  const std::string& error() const { return error_; }

 private:
  UniqueFd fd_;
  std::string peer_;
  size_t max_message_bytes_;
  std::string buffer_;
  std::string error_;
};

}  // namespace primus::io
