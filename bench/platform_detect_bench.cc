// How long a full host detection takes (the budget is 50 ms): DetectHost on
// the real /sys and /proc (or PRIMUS_*_ROOT, or a tree given as argument),
// then ResolveEnvironment, each repeated and reported as min / median / max.
//
//   build/platform_detect_bench [tree] [--runs N]
//
// The first run is reported apart: it reads files the page cache may not
// hold yet, which is what a launcher on a freshly booted node sees.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "platform/environment_plan.h"
#include "platform/host_detect.h"

namespace {

using primus::platform::DetectHost;
using primus::platform::EnvironmentPlanRequest;
using primus::platform::HostInfo;
using primus::platform::Roots;

double Milliseconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

void Report(const char* what, std::vector<double> times) {
  std::sort(times.begin(), times.end());
  fmt::print("{:<22} min {:7.3f} ms   median {:7.3f} ms   max {:7.3f} ms   ({} runs)\n", what, times.front(),
             times[times.size() / 2], times.back(), times.size());
}

}  // namespace

int main(int argc, char** argv) {
  Roots roots = Roots::FromEnvironment();
  int runs = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      roots = Roots::UnderDirectory(argv[i]);
    }
  }

  auto start = std::chrono::steady_clock::now();
  HostInfo host = DetectHost(roots);
  double first = Milliseconds(std::chrono::steady_clock::now() - start);

  std::vector<double> detect, resolve;
  EnvironmentPlanRequest request;
  request.master_addr = "127.0.0.1";
  for (int run = 0; run < runs; ++run) {
    start = std::chrono::steady_clock::now();
    host = DetectHost(roots);
    detect.push_back(Milliseconds(std::chrono::steady_clock::now() - start));
    start = std::chrono::steady_clock::now();
    auto plan = primus::platform::ResolveEnvironment(host, request);
    resolve.push_back(Milliseconds(std::chrono::steady_clock::now() - start));
  }
  fmt::print("host: {} ({} GPUs, {} RDMA ports, {} interfaces, {} CPUs) sys={} proc={}\n", host.hostname,
             host.gpus.size(), host.ib_ports.size(), host.interfaces.size(), host.logical_cpus, roots.sysfs,
             roots.procfs);
  fmt::print("{:<22} {:7.3f} ms\n", "DetectHost, first run", first);
  Report("DetectHost", detect);
  Report("ResolveEnvironment", resolve);
  return 0;
}
