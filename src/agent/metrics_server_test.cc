#include "agent/metrics_server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "agent/launch_handles.h"
#include "io/message_socket.h"

namespace primus::agent {
namespace {

using namespace std::chrono_literals;

// A server on a free loopback port whose loop runs in this thread while the
// clients run in others, as in the agent.
class MetricsServerTest : public ::testing::Test {
 protected:
  void Open(MetricsServerLimits limits = {}) {
    auto poller = io::EventPoller::Create();
    ASSERT_TRUE(poller.ok());
    poller_.emplace(std::move(*poller));
    MetricsProviders providers;
    providers.metrics = [this] {
      ++metrics_calls_;
      return metrics_body_;
    };
    providers.job_json = [] { return std::string(R"({"format": "primus-job-telemetry/1"})"); };
    auto server = MetricsServer::Open(0, *poller_, std::move(providers), limits);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
  }

  // Serves until `done` (or 10 s).
  void ServeUntil(const std::atomic<bool>& done) {
    auto until = std::chrono::steady_clock::now() + 10s;
    while (!done && std::chrono::steady_clock::now() < until) {
      for (const epoll_event& event : poller_->Wait(20)) {
        if (event.data.u64 >= kFirstMetricsTag) server_->OnEvent(event.data.u64);
      }
    }
  }
  void ServeFor(std::chrono::milliseconds duration) {
    std::atomic<bool> done = false;
    std::thread stop([&] {
      std::this_thread::sleep_for(duration);
      done = true;
    });
    ServeUntil(done);
    stop.join();
  }

  int Connect() {
    auto fd = io::ConnectToNode("127.0.0.1", server_->port(), 5);
    return fd.ok() ? fd->Release() : -1;
  }

  // One request, the whole response (until the server closes), or "" on error.
  std::string Fetch(const std::string& request) {
    int fd = Connect();
    if (fd < 0) return "";
    (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string response;
    char buffer[65536];
    while (true) {
      pollfd ready{fd, POLLIN, 0};
      if (::poll(&ready, 1, 5000) <= 0) break;
      ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
      if (got <= 0) break;
      response.append(buffer, static_cast<size_t>(got));
    }
    ::close(fd);
    return response;
  }

  // Runs `client` in a thread while serving; returns what it returned.
  std::string WhileServing(std::function<std::string()> client) {
    std::atomic<bool> done = false;
    std::string result;
    std::thread thread([&] {
      result = client();
      done = true;
    });
    ServeUntil(done);
    thread.join();
    return result;
  }
  std::string Get(const std::string& path, const std::string& method = "GET") {
    return WhileServing([&] { return Fetch(method + " " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"); });
  }

  std::optional<io::EventPoller> poller_;
  std::unique_ptr<MetricsServer> server_;
  std::string metrics_body_ = "primus_job_world_size 2\n";
  std::atomic<int> metrics_calls_ = 0;
};

TEST_F(MetricsServerTest, ServesMetricsInThePrometheusTextFormat) {
  Open();
  std::string response = Get("/metrics");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
  EXPECT_NE(response.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(response.find("\r\nContent-Length: 24\r\n"), std::string::npos);
  EXPECT_NE(response.find("\r\nConnection: close\r\n"), std::string::npos);
  EXPECT_TRUE(response.ends_with("\r\n\r\nprimus_job_world_size 2\n"));
  // The body is built at each request.
  metrics_body_ = "primus_job_world_size 3\n";
  EXPECT_TRUE(Get("/metrics?x=1").ends_with("\r\n\r\nprimus_job_world_size 3\n"));
  EXPECT_EQ(metrics_calls_, 2);
}

TEST_F(MetricsServerTest, ServesTheJobViewAsJson) {
  Open();
  std::string response = Get("/job.json");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
  EXPECT_NE(response.find("\r\nContent-Type: application/json\r\n"), std::string::npos);
  EXPECT_TRUE(response.ends_with(R"({"format": "primus-job-telemetry/1"})"));
}

TEST_F(MetricsServerTest, OtherPathsAndMethodsAreRefused) {
  Open();
  EXPECT_TRUE(Get("/").starts_with("HTTP/1.1 404 Not Found\r\n"));
  EXPECT_TRUE(Get("/metricsx").starts_with("HTTP/1.1 404 Not Found\r\n"));
  std::string post = Get("/metrics", "POST");
  EXPECT_TRUE(post.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << post;
  EXPECT_NE(post.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos);
  EXPECT_TRUE(Get("/metrics", "DELETE").starts_with("HTTP/1.1 405 "));
  std::string head = Get("/metrics", "HEAD");
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK\r\n")) << head;
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << "HEAD has no body";
  EXPECT_TRUE(WhileServing([&] { return Fetch("hello\r\n\r\n"); }).starts_with("HTTP/1.1 400 "));
  EXPECT_EQ(metrics_calls_, 1) << "only HEAD /metrics built the metrics (for its Content-Length)";
}

TEST_F(MetricsServerTest, AnOversizedRequestIsRefusedWithoutReadingItAll) {
  MetricsServerLimits limits;
  limits.max_request_bytes = 1024;
  Open(limits);
  std::string request = "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n";
  std::string response = WhileServing([&] { return Fetch(request); });
  // The answer may be cut by a reset (the rest of the request was never read),
  // but the server never answers it with the metrics.
  EXPECT_EQ(response.find("200 OK"), std::string::npos) << response;
  EXPECT_EQ(metrics_calls_, 0);
  EXPECT_EQ(server_->open_connections(), 0u);
}

TEST_F(MetricsServerTest, ASilentClientDoesNotHoldUpOthersAndIsDroppedAtItsTimeout) {
  MetricsServerLimits limits;
  limits.request_timeout_s = 1;
  Open(limits);
  int silent = Connect();
  ASSERT_GE(silent, 0);
  (void)::send(silent, "GET /metr", 9, MSG_NOSIGNAL);  // and nothing more
  EXPECT_TRUE(Get("/metrics").starts_with("HTTP/1.1 200 OK\r\n"));
  EXPECT_EQ(server_->open_connections(), 1u) << "answered while the silent one still waits";
  ServeFor(1500ms);
  EXPECT_EQ(server_->open_connections(), 0u);
  char byte;
  EXPECT_LE(::recv(silent, &byte, 1, MSG_DONTWAIT), 0) << "the silent client was closed";
  ::close(silent);
}

TEST_F(MetricsServerTest, AClientThatDoesNotReadCannotStallTheLoop) {
  MetricsServerLimits limits;
  limits.response_timeout_s = 1;
  Open(limits);
  metrics_body_ = std::string(16 << 20, 'x');  // more than the socket buffers hold
  int reader = Connect();
  ASSERT_GE(reader, 0);
  std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
  (void)::send(reader, request.data(), request.size(), MSG_NOSIGNAL);
  ServeFor(100ms);
  EXPECT_EQ(server_->open_connections(), 1u) << "the response waits for the client";
  metrics_body_ = "small\n";
  EXPECT_TRUE(Get("/metrics").ends_with("\r\n\r\nsmall\n"));
  EXPECT_EQ(server_->open_connections(), 1u) << "answered while the big answer still waits";
  ServeFor(1500ms);
  EXPECT_EQ(server_->open_connections(), 0u) << "dropped at the response timeout";
  ::close(reader);
}

TEST_F(MetricsServerTest, AtTheCapANewClientTakesThePlaceOfTheOldestIdleOne) {
  MetricsServerLimits limits;
  limits.max_connections = 2;
  limits.request_timeout_s = 5;
  Open(limits);
  int first = Connect(), second = Connect();
  ServeFor(50ms);
  EXPECT_EQ(server_->open_connections(), 2u);
  EXPECT_TRUE(Get("/metrics").starts_with("HTTP/1.1 200 OK\r\n")) << "the scrape is answered, not reset";
  // The oldest idle connection made room: the server closed it.
  char byte;
  pollfd closed{first, POLLIN, 0};
  ASSERT_EQ(::poll(&closed, 1, 1000), 1);
  EXPECT_EQ(::recv(first, &byte, 1, 0), 0) << "the oldest idle client was closed";
  EXPECT_EQ(server_->open_connections(), 1u) << "the second idle client is still open";
  ::close(first);
  ::close(second);
}

TEST_F(MetricsServerTest, AtTheCapWithEveryClientBeingAnsweredTheNewOneIsClosed) {
  MetricsServerLimits limits;
  limits.max_connections = 1;
  Open(limits);
  metrics_body_ = std::string(16 << 20, 'm');  // more than a socket holds: the answer waits for the reader
  int reader = Connect();
  std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(reader, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  ServeFor(100ms);
  EXPECT_EQ(server_->open_connections(), 1u);
  EXPECT_EQ(Get("/metrics"), "") << "a client being answered is never dropped for a new one";
  ::close(reader);
}

// Slow clients (a byte of a request, then nothing) fill the connections; a
// scraper is still answered at once, every time.
TEST_F(MetricsServerTest, EightySlowClientsNeverLockAScraperOut) {
  Open();
  std::vector<int> slow;
  for (int i = 0; i < 80; ++i) {
    int fd = Connect();
    ASSERT_GE(fd, 0);
    (void)::send(fd, "G", 1, MSG_NOSIGNAL);
    slow.push_back(fd);
    if (i % 16 == 15) ServeFor(10ms);
  }
  ServeFor(50ms);
  for (int scrape = 0; scrape < 10; ++scrape) {
    EXPECT_TRUE(Get("/metrics").starts_with("HTTP/1.1 200 OK\r\n")) << "scrape " << scrape << " was reset";
  }
  EXPECT_LE(server_->open_connections(), 64u);
  for (int fd : slow) ::close(fd);
}

TEST_F(MetricsServerTest, ManyClientsAtOnceAllGetTheirAnswer) {
  Open();
  metrics_body_ = std::string(256 << 10, 'm');  // several writes each
  constexpr int kClients = 40;
  std::vector<std::string> responses(kClients);
  std::atomic<int> finished = 0;
  std::atomic<bool> done = false;
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      responses[i] = Fetch("GET /metrics HTTP/1.1\r\n\r\n");
      if (++finished == kClients) done = true;
    });
  }
  ServeUntil(done);
  for (std::thread& client : clients) client.join();
  for (const std::string& response : responses) {
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_TRUE(response.ends_with("\r\n\r\n" + metrics_body_));
  }
  EXPECT_EQ(server_->open_connections(), 0u);
}

TEST_F(MetricsServerTest, APortInUseIsUnavailableNamingTheFlag) {
  auto taken = io::ListenForNodes(0);
  ASSERT_TRUE(taken.ok());
  int port = io::BoundPort(taken->get());
  auto poller = io::EventPoller::Create();
  ASSERT_TRUE(poller.ok());
  auto server = MetricsServer::Open(port, *poller, {});
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.error().code, ExitCode::kUnavailable);
  EXPECT_NE(server.error().message.find("metrics port " + std::to_string(port) + " is already in use"),
            std::string::npos)
      << server.error().message;
  EXPECT_NE(server.error().hint.find("--metrics-port"), std::string::npos);
}

}  // namespace
}  // namespace primus::agent
