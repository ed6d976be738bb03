#include "preflight/cross_node_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace primus::preflight {
namespace {

constexpr double kSkewWarnMs = 100, kSkewFailMs = 1000;
constexpr double kRttWarnMs = 5;
constexpr double kBandwidthWarnGbs = 0.1;

const std::map<std::string, std::string>& FactLabels() {
  static const std::map<std::string, std::string> labels = {
      {"gpu_count", "GPU count"}, {"gpu_model", "GPU model"}, {"driver", "GPU driver"},
      {"torch", "torch version"}, {"collective", "collective library"}};
  return labels;
}

}  // namespace

void AddCrossNodeChecks(Gathered* gathered, const std::vector<std::string>& expected_hosts, double timeout_s) {
  auto& nodes = gathered->nodes;
  for (const auto& [fact, label] : FactLabels()) {
    std::map<std::string, int> counts;
    for (const auto& node : nodes) {
      if (node && node->facts.count(fact)) ++counts[node->facts.at(fact)];
    }
    if (counts.empty()) continue;
    std::string expected = counts.begin()->first;
    int best = 0;
    for (const auto& [value, count] : counts) {
      if (count > best || (count == best && nodes[0] && nodes[0]->facts.count(fact) && nodes[0]->facts.at(fact) == value)) {
        expected = value;
        best = count;
      }
    }
    for (auto& node : nodes) {
      if (!node || !node->facts.count(fact)) continue;
      const std::string& value = node->facts.at(fact);
      std::string name = "uniform " + label;
      if (value == expected) {
        node->results.push_back(Pass("cluster", name, value, "the same on every node"));
      } else {
        node->results.push_back(Fail("cluster", name, value,
                                     fmt::format("{} (as on {} of {} nodes)", expected, best, nodes.size()),
                                     "this node differs from the others: exclude it or bring it in line"));
      }
    }
  }
  for (const auto& [rank, link] : gathered->links) {
    auto& node = nodes[static_cast<size_t>(rank)];
    if (!node) continue;
    double skew = std::fabs(link.clock_offset_ms);
    std::string value = fmt::format("{:+.1f} ms against node 0", link.clock_offset_ms);
    if (skew > kSkewFailMs) {
      node->results.push_back(Fail("cluster", "clock skew", value, "< 100 ms",
                                   "the clock is off: check chrony/ntpd (chronyc tracking); logs and timeouts go wrong"));
    } else if (skew > kSkewWarnMs) {
      node->results.push_back(Warn("cluster", "clock skew", value, "< 100 ms", "check time sync (chronyc tracking)"));
    } else {
      node->results.push_back(Pass("cluster", "clock skew", value, "< 100 ms"));
    }
    std::string latency = fmt::format("{:.3f} ms round trip to node 0", link.rtt_ms);
    if (link.rtt_ms > kRttWarnMs) {
      node->results.push_back(Warn("cluster", "latency", latency, "< 5 ms", "a slow path to node 0: check the route and the NIC"));
    } else {
      node->results.push_back(Pass("cluster", "latency", latency, "< 5 ms"));
    }
    std::string bandwidth = fmt::format("{:.2f} GB/s from node 0 (TCP)", link.bandwidth_gbs);
    if (link.bandwidth_gbs < kBandwidthWarnGbs) {
      node->results.push_back(Warn("cluster", "bandwidth", bandwidth, ">= 0.1 GB/s",
                                   "a slow TCP path (bootstrap and gloo use it): check the interface speed and MTU"));
    } else {
      node->results.push_back(Pass("cluster", "bandwidth", bandwidth, ">= 0.1 GB/s"));
    }
  }
  for (size_t rank = 0; rank < nodes.size(); ++rank) {
    if (nodes[rank]) continue;
    NodeReport missing;
    missing.node_rank = static_cast<int>(rank);
    missing.host = rank < expected_hosts.size() ? expected_hosts[rank] : "";
    missing.results.push_back(Fail("cluster", "reported", fmt::format("no report within {:g} s", timeout_s),
                                   "every node reports to node 0",
                                   "preflight did not start there, or cannot reach node 0: check that node's output"));
    nodes[rank] = std::move(missing);
  }
}

}  // namespace primus::preflight
