#include "prometheus_server.h"

#include "free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "start_process.h"
#include "wait_for.h"

namespace primus::testing {
namespace {

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buffer[4];
      std::snprintf(buffer, sizeof(buffer), "%%%02X", c);
      out += buffer;
    }
  }
  return out;
}

}  // namespace

std::optional<HttpReply> HttpGet(int port, const std::string& target) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return std::nullopt;
  }
  std::string response;
  char buffer[65536];
  ssize_t got;
  while ((got = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, static_cast<size_t>(got));
  ::close(fd);
  size_t head_end = response.find("\r\n\r\n");
  if (!response.starts_with("HTTP/1.") || head_end == std::string::npos || response.size() < 12) return std::nullopt;
  HttpReply reply;
  reply.status = std::atoi(response.substr(9, 3).c_str());
  reply.headers = response.substr(0, head_end + 2);
  reply.body = response.substr(head_end + 4);
  // Chunked bodies (Prometheus's API uses them for long answers): joined.
  if (reply.headers.find("Transfer-Encoding: chunked") != std::string::npos) {
    std::string joined;
    size_t at = 0;
    while (at < reply.body.size()) {
      size_t line_end = reply.body.find("\r\n", at);
      if (line_end == std::string::npos) break;
      size_t size = std::strtoul(reply.body.substr(at, line_end - at).c_str(), nullptr, 16);
      if (size == 0) break;
      joined += reply.body.substr(line_end + 2, size);
      at = line_end + 2 + size + 2;
    }
    reply.body = joined;
  }
  return reply;
}

std::unique_ptr<PrometheusServer> PrometheusServer::Start(const std::vector<std::string>& targets,
                                                          std::string* error) {
  std::unique_ptr<PrometheusServer> server(new PrometheusServer());
  std::string target_list;
  for (const std::string& target : targets) target_list += (target_list.empty() ? "'" : ", '") + target + "'";
  std::string config = server->dir_.Write("prometheus.yml",
                                          "global:\n"
                                          "  scrape_interval: 1s\n"
                                          "  scrape_timeout: 1s\n"
                                          "  evaluation_interval: 1s\n"
                                          "scrape_configs:\n"
                                          "  - job_name: primus\n"
                                          "    static_configs:\n"
                                          "      - targets: [" + target_list + "]\n");
  server->port_ = FreePort();
  std::string address = "127.0.0.1:" + std::to_string(server->port_);
  server->pid_ = StartProcess({"prometheus", "--config.file=" + config, "--storage.tsdb.path=" + server->dir_.path() + "/data",
                               "--web.listen-address=" + address, "--log.level=warn"},
                              server->dir_.path() + "/stdout", server->dir_.path() + "/stderr");
  if (server->pid_ < 0) {
    *error = "cannot start prometheus (apt-get install prometheus; scripts/setup.sh installs it)";
    return nullptr;
  }
  int port = server->port_;
  bool ready = WaitFor(
      [&] {
        auto reply = HttpGet(port, "/-/ready");
        return reply && reply->status == 200;
      },
      30);
  if (!ready) {
    *error = "prometheus did not become ready on " + address + " within 30 s: " + server->Log();
    return nullptr;
  }
  return server;
}

PrometheusServer::~PrometheusServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    if (WaitForExit(pid_, 10) == -1) last_error_ = "prometheus ignored SIGTERM";
  }
}

std::optional<nlohmann::json> PrometheusServer::Query(const std::string& promql) {
  auto reply = HttpGet(port_, "/api/v1/query?query=" + UrlEncode(promql));
  if (!reply) {
    last_error_ = "no answer from prometheus";
    return std::nullopt;
  }
  auto json = nlohmann::json::parse(reply->body, nullptr, false);
  if (json.is_discarded() || json.value("status", "") != "success") {
    last_error_ = "query " + promql + ": HTTP " + std::to_string(reply->status) + ": " + reply->body;
    return std::nullopt;
  }
  return json["data"]["result"];
}

std::optional<double> PrometheusServer::QueryValue(const std::string& promql) {
  auto result = Query(promql);
  if (!result || !result->is_array() || result->empty()) return std::nullopt;
  const nlohmann::json& value = (*result)[0]["value"];
  if (!value.is_array() || value.size() != 2 || !value[1].is_string()) return std::nullopt;
  return std::stod(value[1].get<std::string>());
}

std::string PrometheusServer::Log() const { return Slurp(dir_.path() + "/stderr"); }

}  // namespace primus::testing
