// Test support: a real Prometheus (Debian's `prometheus` package) on a free
// loopback port, scraping the given targets every second, with its own data
// directory, for tests that check what a scraper sees of the metrics port.
// Start waits until it is ready; Query asks its HTTP API (/api/v1/query);
// the destructor stops it (SIGTERM, then SIGKILL) and removes its files.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_process.h"

namespace primus::testing {

// GET http://127.0.0.1:PORT<target> with a 5 s bound: the status code and
// the body, or nullopt when nothing answered.
struct HttpReply {
  int status = 0;
  std::string headers;
  std::string body;
};
std::optional<HttpReply> HttpGet(int port, const std::string& target);

class PrometheusServer {
 public:
  // `targets`: "127.0.0.1:PORT" each, scraped at /metrics every second under
  // job "primus". Nullptr and `error` set when it did not become ready in 30 s.
  static std::unique_ptr<PrometheusServer> Start(const std::vector<std::string>& targets, std::string* error);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  int port() const { return port_; }
  // The instant query's `data.result` (a vector of {metric, value}), or
  // nullopt when the query failed (its error is in last_error()).
  std::optional<nlohmann::json> Query(const std::string& promql);
  // The first sample's value of the query's result, when there is one.
  std::optional<double> QueryValue(const std::string& promql);
  const std::string& last_error() const { return last_error_; }
  // What Prometheus wrote to stderr so far (for a failing test's message).
  std::string Log() const;

 private:
  PrometheusServer() = default;

  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string last_error_;
};

}  // namespace primus::testing
