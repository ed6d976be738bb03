// `/metrics` latency of the agent's metrics port for a 64-node x 8-GPU job
// view, against an anchor in the same run: the same bytes as a static file
// from `python3 -m http.server`. Both are fetched by the same loopback
// client (connect, GET, read to the end); the medians and their ratio are
// printed, and the render alone. Target: under 10 ms.
//
//   build/bench/metrics_latency [requests]   (default 200)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/launch_handles.h"
#include "agent/metrics_server.h"
#include "telemetry/prometheus_text.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// 64 nodes x 8 GPUs x 8 ranks, every field of docs/monitor.md filled in.
Json SyntheticJobView() {
  Json nodes = Json::array();
  for (int node = 0; node < 64; ++node) {
    Json gpus = Json::array(), workers = Json::array();
    for (int local = 0; local < 8; ++local) {
      gpus.push_back({{"index", local}, {"bus_id", "0000:0" + std::to_string(local) + ":00.0"}, {"vendor", "amd"},
                      {"utilization_percent", 90 + local}, {"memory_used_bytes", 150000000000ull + local},
                      {"memory_total_bytes", 206158430208ull}, {"power_watts", 612.5 + local},
                      {"temperature_c", 70 + local}, {"clock_mhz", 2100}});
      workers.push_back({{"rank", node * 8 + local}, {"local_rank", local}, {"pid", 10000 + local}, {"state", "running"},
                         {"cpu_percent", 99.5}, {"rss_bytes", 12345678901ull}, {"step", 1200}, {"total_steps", 20000},
                         {"loss", 2.345678}, {"tokens_per_s", 12345.6}, {"step_time_s", 0.4213},
                         {"metrics_time", 1764059999.9}});
    }
    nodes.push_back({{"node_rank", node}, {"host", "gpu-node-" + std::to_string(node)}, {"time", 1764060000.123},
                     {"generation", 0}, {"age_s", 0.8},
                     {"host_stats", {{"cpus", 192}, {"cpu_percent", 1530.2}, {"mem_used_bytes", 812345678901ull},
                                     {"mem_total_bytes", 2061584302080ull},
                                     {"net", {{{"interface", "ens1f0"}, {"rx_bytes", 123456789012ull},
                                               {"tx_bytes", 456789012345ull}, {"rx_bytes_per_s", 1.5e9},
                                               {"tx_bytes_per_s", 1.4e9}}}}}},
                     {"gpus", gpus}, {"workers", workers}});
  }
  return {{"format", "primus-job-telemetry/1"},
          {"job", {{"run_id", "20261125-093000-1a2b3c"}, {"coordinator", "gpu-node-0"}, {"time", 1764060000.2},
                   {"state", "running"}, {"generation", 0}, {"restarts", 0}, {"nnodes", 64}, {"world_size", 512},
                   {"interval_s", 5}, {"step", 1200}, {"total_steps", 20000}, {"progress", 0.06}, {"eta_s", 7900.2},
                   {"loss", 2.345678}, {"tokens_per_s", 6320947.2}, {"median_step_time_s", 0.42}}},
          {"stragglers", {{{"kind", "rank"}, {"rank", 3}, {"node_rank", 0}, {"host", "gpu-node-0"}, {"step_time_s", 0.61},
                           {"median_step_time_s", 0.42}, {"ratio", 1.45}, {"samples", 3}}}},
          {"nodes", nodes}};
}

// One GET over a fresh loopback connection, read to the end: seconds, and the body size.
double Fetch(int port, const std::string& path, size_t* bytes) {
  auto start = Clock::now();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  static char buffer[1 << 16];
  size_t total = 0;
  ssize_t got;
  while ((got = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) total += static_cast<size_t>(got);
  ::close(fd);
  *bytes = total;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

int main(int argc, char** argv) {
  int requests = argc > 1 ? std::atoi(argv[1]) : 200;
  const Json view = SyntheticJobView();

  // The render alone.
  std::vector<double> renders;
  std::string text;
  for (int i = 0; i < requests; ++i) {
    auto start = Clock::now();
    text = primus::telemetry::RenderPrometheusText(view);
    renders.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  size_t series = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));

  // Ours: the metrics server in its own epoll loop (a thread here, the agent's loop in a run),
  // rendering the view at every request.
  auto poller = primus::io::EventPoller::Create();
  primus::agent::MetricsProviders providers;
  providers.metrics = [&view] { return primus::telemetry::RenderPrometheusText(view); };
  auto server = primus::agent::MetricsServer::Open(0, *poller, providers);
  if (!server) {
    std::fprintf(stderr, "metrics server: %s\n", server.error().message.c_str());
    return 1;
  }
  std::atomic<bool> stop = false;
  std::thread loop([&] {
    while (!stop) {
      for (const epoll_event& event : poller->Wait(50)) (*server)->OnEvent(event.data.u64);
    }
  });

  // The anchor: the same bytes as a static file from python3 -m http.server.
  char dir_template[] = "/tmp/primus-metrics-bench-XXXXXX";
  std::string dir = ::mkdtemp(dir_template);
  std::ofstream(dir + "/metrics") << text;
  int anchor_port = FreePort();
  pid_t anchor = ::fork();
  if (anchor == 0) {
    ::freopen("/dev/null", "w", stderr);
    // Debian's interpreter where there is one (a python3 first on PATH may be a slow shim).
    const char* python = ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    ::execlp(python, python, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir.c_str(),
             std::to_string(anchor_port).c_str(), nullptr);
    _exit(127);
  }
  size_t bytes = 0;
  for (int i = 0; i < 300 && Fetch(anchor_port, "/metrics", &bytes) < 0; ++i) ::usleep(20000);

  std::vector<double> ours, theirs;
  size_t our_bytes = 0, their_bytes = 0;
  for (int i = 0; i < requests; ++i) {  // interleaved, so that load hits both alike
    ours.push_back(Fetch((*server)->port(), "/metrics", &our_bytes));
    theirs.push_back(Fetch(anchor_port, "/metrics", &their_bytes));
  }
  stop = true;
  loop.join();
  ::kill(anchor, SIGTERM);
  ::waitpid(anchor, nullptr, 0);
  std::remove((dir + "/metrics").c_str());
  ::rmdir(dir.c_str());

  double ours_ms = Median(ours) * 1e3, theirs_ms = Median(theirs) * 1e3;
  std::printf("job view: 64 nodes x 8 GPUs, %zu lines of /metrics, %zu bytes\n", series, text.size());
  std::printf("render alone:                         median %.2f ms (%d runs)\n", Median(renders) * 1e3, requests);
  std::printf("GET /metrics, primus metrics port:    median %.2f ms, p90 %.2f ms (%zu bytes per answer)\n", ours_ms,
              [&] { auto s = ours; std::sort(s.begin(), s.end()); return s[s.size() * 9 / 10] * 1e3; }(), our_bytes);
  std::printf("GET static file, python3 http.server: median %.2f ms (%zu bytes per answer)\n", theirs_ms, their_bytes);
  std::printf("ratio ours / anchor: %.2f; target under 10 ms: %s\n", ours_ms / theirs_ms, ours_ms < 10 ? "met" : "MISSED");
  return ours_ms < 10 ? 0 : 1;
}
