#include "agent/metrics_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>

#include "agent/launch_handles.h"
#include "io/message_socket.h"
#include "util/log.h"

namespace primus::agent {
namespace {

constexpr uint64_t kListenerTag = kFirstMetricsTag;
constexpr uint64_t kTimerTagOffset = 1;
constexpr uint64_t kFirstConnectionOffset = 2;
// Connections taken off the backlog per readable event: the rest wait for the
// next turn of the loop, so a flood cannot keep the agent from its workers.
constexpr int kAcceptsPerEvent = 64;

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kJsonContentType[] = "application/json";
constexpr char kTextContentType[] = "text/plain; charset=utf-8";

std::string Response(int status, const char* reason, const char* content_type, const std::string& body,
                     bool with_body, const char* extra_header = "") {
  std::string out;
  out.reserve(160 + (with_body ? body.size() : 0));
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += reason;
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\nCache-Control: no-store\r\nConnection: close\r\n";
  out += extra_header;
  out += "\r\n";
  if (with_body) out += body;
  return out;
}

// Where the request's head ends (after its blank line), or npos.
size_t HeadEnd(std::string_view data) {
  size_t crlf = data.find("\r\n\r\n");
  size_t lf = data.find("\n\n");
  if (crlf == std::string_view::npos && lf == std::string_view::npos) return std::string_view::npos;
  if (crlf != std::string_view::npos && (lf == std::string_view::npos || crlf + 2 <= lf)) return crlf + 4;
  return lf + 2;
}

}  // namespace

struct MetricsServer::Connection {
  uint64_t id = 0;
  io::UniqueFd fd;
  std::string in;
  std::string out;
  size_t written = 0;
  bool responding = false;
  SteadyTime deadline;
};

Result<std::unique_ptr<MetricsServer>> MetricsServer::Open(int port, io::EventPoller& poller, MetricsProviders providers,
                                                           MetricsServerLimits limits) {
  bool in_use = false;
  auto listener = io::ListenForNodes(port, &in_use, "metrics port");
  if (!listener) {
    if (in_use) {
      return UnavailableError("metrics port " + std::to_string(port) + " is already in use on this node",
                              "choose a free port with --metrics-port (or direct.metrics_port), or 0 for any free one");
    }
    return UnavailableError(listener.error().message, "choose another --metrics-port, or 0 for any free one");
  }
  auto timer = DeadlineTimer::Create();
  if (!timer) return timer.error();
  std::unique_ptr<MetricsServer> server(
      new MetricsServer(poller, std::move(providers), limits, std::move(*listener), std::move(*timer)));
  if (Status added = poller.Add(server->listener_.get(), kListenerTag); !added) return added.error();
  if (Status added = poller.Add(server->timer_.fd(), kListenerTag + kTimerTagOffset); !added) {
    poller.Remove(server->listener_.get());
    return added.error();
  }
  return server;
}

MetricsServer::MetricsServer(io::EventPoller& poller, MetricsProviders providers, MetricsServerLimits limits,
                             io::UniqueFd listener, DeadlineTimer timer)
    : poller_(poller),
      providers_(std::move(providers)),
      limits_(limits),
      listener_(std::move(listener)),
      timer_(std::move(timer)) {
  port_ = io::BoundPort(listener_.get());
}

MetricsServer::~MetricsServer() {
  for (const auto& connection : connections_) poller_.Remove(connection->fd.get());
  poller_.Remove(timer_.fd());
  poller_.Remove(listener_.get());
}

void MetricsServer::OnEvent(uint64_t tag) {
  if (tag == kListenerTag) {
    AcceptAll();
  } else if (tag == kListenerTag + kTimerTagOffset) {
    timer_.Acknowledge();
    ExpireDeadlines();
  } else if (tag >= kListenerTag + kFirstConnectionOffset) {
    uint64_t id = tag - kListenerTag - kFirstConnectionOffset;
    if (Connection* connection = Find(id)) {
      if (connection->responding) Write(*connection);
      else Read(*connection);
    }
  }
  ArmTimer();
}

void MetricsServer::AcceptAll() {
  for (int i = 0; i < kAcceptsPerEvent; ++i) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: none left; EMFILE and the like: try again at the next event
    }
    io::UniqueFd accepted(fd);
    if (connections_.size() >= limits_.max_connections) {
      // Full: the oldest connection still waiting for its request makes
      // room (slow or idle clients must not lock scrapers out); when every
      // one is being answered, the new one is closed (the client sees a reset).
      auto idle = std::find_if(connections_.begin(), connections_.end(),
                               [](const auto& open) { return !open->responding; });
      if (idle == connections_.end()) continue;
      Close((*idle)->id);
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto connection = std::make_unique<Connection>();
    connection->id = next_id_++;
    connection->fd = std::move(accepted);
    connection->deadline = SteadyClock::now() + Seconds(limits_.request_timeout_s);
    if (!poller_.Add(connection->fd.get(), kListenerTag + kFirstConnectionOffset + connection->id)) continue;
    connections_.push_back(std::move(connection));
  }
}

void MetricsServer::Read(Connection& connection) {
  char buffer[4096];
  while (true) {
    ssize_t got = ::recv(connection.fd.get(), buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got <= 0) {
      Close(connection.id);  // the client went away before asking anything
      return;
    }
    size_t searched_from = connection.in.size() >= 3 ? connection.in.size() - 3 : 0;
    connection.in.append(buffer, static_cast<size_t>(got));
    size_t end = HeadEnd(std::string_view(connection.in).substr(searched_from));
    if (end != std::string_view::npos) {
      end += searched_from;
      if (end > limits_.max_request_bytes) break;
      Answer(connection, std::string_view(connection.in).substr(0, end));
      return;
    }
    if (connection.in.size() > limits_.max_request_bytes) break;
  }
  connection.in.clear();
  connection.responding = true;
  connection.out = Response(431, "Request Header Fields Too Large", kTextContentType,
                            "the request is larger than " + std::to_string(limits_.max_request_bytes) + " bytes\n", true);
  connection.deadline = SteadyClock::now() + Seconds(limits_.response_timeout_s);
  Write(connection);
}

void MetricsServer::Answer(Connection& connection, std::string_view request) {
  // Request line: METHOD SP TARGET SP VERSION
  std::string_view line = request.substr(0, request.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t first_space = line.find(' ');
  size_t second_space = first_space == std::string_view::npos ? first_space : line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos || !line.substr(second_space + 1).starts_with("HTTP/1.")) {
    connection.out = Response(400, "Bad Request", kTextContentType, "not an HTTP/1.x request\n", true);
  } else {
    std::string_view method = line.substr(0, first_space);
    std::string_view target = line.substr(first_space + 1, second_space - first_space - 1);
    target = target.substr(0, target.find('?'));
    bool head = method == "HEAD";
    if (method != "GET" && !head) {
      connection.out = Response(405, "Method Not Allowed", kTextContentType, "only GET is served here\n", true,
                                "Allow: GET, HEAD\r\n");
    } else if (target == "/metrics" || target == "/job.json") {
      bool metrics = target == "/metrics";
      const std::function<std::string()>& provider = metrics ? providers_.metrics : providers_.job_json;
      try {
        std::string body = provider ? provider() : std::string();
        connection.out =
            Response(200, "OK", metrics ? kMetricsContentType : kJsonContentType, body, !head);
      } catch (const std::exception& error) {
        log::Warn("metrics port: could not build {}: {}", target, error.what());
        connection.out = Response(500, "Internal Server Error", kTextContentType,
                                  std::string("could not build the answer: ") + error.what() + "\n", !head);
      }
    } else {
      connection.out = Response(404, "Not Found", kTextContentType, "not found: the paths are /metrics and /job.json\n",
                                !head);
    }
  }
  connection.in.clear();
  connection.in.shrink_to_fit();
  connection.responding = true;
  connection.deadline = SteadyClock::now() + Seconds(limits_.response_timeout_s);
  Write(connection);
}

void MetricsServer::Write(Connection& connection) {
  while (connection.written < connection.out.size()) {
    ssize_t sent = ::send(connection.fd.get(), connection.out.data() + connection.written,
                          connection.out.size() - connection.written, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The rest when the client has taken some: watch for writability.
      (void)poller_.WatchWritable(connection.fd.get(), kListenerTag + kFirstConnectionOffset + connection.id, true);
      return;
    }
    if (sent <= 0) break;  // the client is gone
    connection.written += static_cast<size_t>(sent);
  }
  if (connection.written == connection.out.size()) ::shutdown(connection.fd.get(), SHUT_WR);
  Close(connection.id);
}

void MetricsServer::Close(uint64_t id) {
  auto it = std::find_if(connections_.begin(), connections_.end(),
                         [id](const std::unique_ptr<Connection>& connection) { return connection->id == id; });
  if (it == connections_.end()) return;
  poller_.Remove((*it)->fd.get());
  connections_.erase(it);
}

void MetricsServer::ExpireDeadlines() {
  SteadyTime now = SteadyClock::now();
  std::vector<uint64_t> expired;
  for (const auto& connection : connections_) {
    if (connection->deadline <= now) expired.push_back(connection->id);
  }
  for (uint64_t id : expired) Close(id);
}

void MetricsServer::ArmTimer() {
  std::optional<SteadyTime> earliest;
  for (const auto& connection : connections_) {
    if (!earliest || connection->deadline < *earliest) earliest = connection->deadline;
  }
  timer_.ArmAt(earliest);
}

MetricsServer::Connection* MetricsServer::Find(uint64_t id) {
  for (const auto& connection : connections_) {
    if (connection->id == id) return connection.get();
  }
  return nullptr;
}

}  // namespace primus::agent
