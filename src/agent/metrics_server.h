// The agent's metrics port (--metrics-port): a small HTTP/1.1 server inside
// the agent's epoll loop, for Prometheus and for `curl`. It answers
//   GET /metrics   the Prometheus text format (text/plain; version=0.0.4)
//   GET /job.json  the job view (application/json)
// from two callbacks that build the body at each request, 404 for any other
// path and 405 for any other method (HEAD is answered like GET, without body).
//
// No threads, and nothing a client does can stall the agent: every socket is
// non-blocking, a response is written as far as the client takes it and the
// rest when it is writable again, and each client is bounded: the request may
// be at most max_request_bytes and must arrive within request_timeout_s, the
// response must be taken within response_timeout_s, and at most
// max_connections are open at once: a new one then takes the place of the
// oldest that has not sent its request yet (so idle or slow clients cannot
// lock Prometheus out), or is closed when every one is being answered. Every response
// closes its connection (Connection: close), which Prometheus handles.
//
// The server's fds carry tags kFirstMetricsTag and up (launch_handles.h): its
// listening socket, its own timerfd for the client deadlines, and one per
// connection. Whoever waits on the poller hands those tags to OnEvent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/deadline_timer.h"
#include "io/event_poller.h"
#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::agent {

struct MetricsProviders {
  std::function<std::string()> metrics;   // the body of GET /metrics
  std::function<std::string()> job_json;  // the body of GET /job.json
};

struct MetricsServerLimits {
  size_t max_request_bytes = 8 << 10;
  double request_timeout_s = 5;
  double response_timeout_s = 30;
  size_t max_connections = 64;
};

class MetricsServer {
 public:
  // Listens on `port` of every address, IPv4 and IPv6 (0: a free port, see
  // port()). A port in use is an UnavailableError (code 4) naming
  // --metrics-port.
  static Result<std::unique_ptr<MetricsServer>> Open(int port, io::EventPoller& poller, MetricsProviders providers,
                                                     MetricsServerLimits limits = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  // An event of one of the server's tags (kFirstMetricsTag and up): accepts,
  // reads, answers, writes, or closes what ran out of time.
  void OnEvent(uint64_t tag);
  size_t open_connections() const { return connections_.size(); }

 private:
  struct Connection;
  MetricsServer(io::EventPoller& poller, MetricsProviders providers, MetricsServerLimits limits, io::UniqueFd listener,
                DeadlineTimer timer);

  void AcceptAll();
  void Read(Connection& connection);
  void Answer(Connection& connection, std::string_view request);
  void Write(Connection& connection);
  void Close(uint64_t id);
  void ExpireDeadlines();
  void ArmTimer();
  Connection* Find(uint64_t id);

  io::EventPoller& poller_;
  MetricsProviders providers_;
  MetricsServerLimits limits_;
  io::UniqueFd listener_;
  DeadlineTimer timer_;
  int port_ = 0;
  uint64_t next_id_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
};

}  // namespace primus::agent
