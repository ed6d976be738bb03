#include "preflight/preflight_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/files.h"
#include "util/strings.h"

namespace primus::preflight {
namespace {

std::string HostOf(const NodeReport& node) {
  return node.host.empty() ? fmt::format("node{}", node.node_rank) : node.host;
}

}  // namespace

CheckStatus JobStatus(const std::vector<std::optional<NodeReport>>& nodes) {
  CheckStatus job = CheckStatus::kPass;
  for (const auto& node : nodes) {
    if (!node) continue;
    CheckStatus worst = Worst(node->results);
    if (worst == CheckStatus::kFail) return worst;
    if (worst == CheckStatus::kWarn) job = worst;
  }
  return job;
}

std::string FormatNodeChecks(const NodeReport& report) {
  std::string out = fmt::format("preflight on {} (node {})\n\n", HostOf(report), report.node_rank);
  size_t name_width = 10;
  for (const CheckResult& r : report.results) name_width = std::max(name_width, r.category.size() + r.name.size() + 2);
  for (const CheckResult& r : report.results) {
    out += fmt::format("  {}  {:<{}} {}{}\n", StatusName(r.status), r.category + "  " + r.name, name_width, r.value,
                       r.expected.empty() || r.status == CheckStatus::kSkip ? "" : "  (expected " + r.expected + ")");
    if (!r.fix.empty() && (r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail)) {
      out += fmt::format("        fix: {}\n", r.fix);
    }
  }
  size_t counts[4] = {};
  for (const CheckResult& r : report.results) ++counts[static_cast<int>(r.status)];
  out += fmt::format("\n{}: {} passed, {} warnings, {} failed, {} skipped\n", StatusName(Worst(report.results)), counts[0],
                     counts[1], counts[2], counts[3]);
  return out;
}

std::string FormatJobSummary(const std::vector<std::optional<NodeReport>>& nodes) {
  std::string out = fmt::format("\npreflight of {} node(s)\n\n  node  {:<24} status  pass/warn/fail/skip  link to node 0\n",
                                nodes.size(), "host");
  std::string details;
  for (const auto& node : nodes) {
    if (!node) continue;
    size_t counts[4] = {};
    for (const CheckResult& r : node->results) ++counts[static_cast<int>(r.status)];
    CheckStatus worst = Worst(node->results);
    std::vector<std::string> link;
    for (const CheckResult& r : node->results) {
      if (r.category == "cluster" && (r.name == "latency" || r.name == "clock skew" || r.name == "bandwidth")) {
        std::string value = r.value;
        for (const char* tail : {" to node 0", " against node 0", " from node 0 (TCP)"}) {
          if (size_t at = value.find(tail); at != std::string::npos) value.erase(at);
        }
        link.push_back(r.name == "clock skew" ? "skew " + value : value);
      }
    }
    out += fmt::format("  {:<5} {:<24} {}    {:<19} {}\n", node->node_rank, HostOf(*node), StatusName(worst),
                       fmt::format("{}/{}/{}/{}", counts[0], counts[1], counts[2], counts[3]),
                       link.empty() ? "-" : Join(link, ", "));
    for (const CheckResult& r : node->results) {
      if (r.status != CheckStatus::kFail && r.status != CheckStatus::kWarn) continue;
      details += fmt::format("  {} node {} ({}): {} {}: {}{}\n        fix: {}\n", StatusName(r.status), node->node_rank,
                             HostOf(*node), r.category, r.name, r.value,
                             r.expected.empty() ? "" : " (expected " + r.expected + ")", r.fix);
    }
  }
  return out + (details.empty() ? "" : "\n" + details);
}

std::string ReportJson(const std::vector<std::optional<NodeReport>>& nodes) {
  nlohmann::ordered_json root;
  root["nodes"] = nlohmann::ordered_json::array();
  for (const auto& node : nodes) {
    if (!node) continue;
    nlohmann::ordered_json entry;
    entry["node_rank"] = node->node_rank;
    entry["host"] = HostOf(*node);
    entry["status"] = StatusName(Worst(node->results));
    entry["facts"] = node->facts;
    entry["checks"] = nlohmann::ordered_json::array();
    for (const CheckResult& r : node->results) entry["checks"].push_back(CheckToJson(r));
    root["nodes"].push_back(entry);
  }
  root["status"] = StatusName(JobStatus(nodes));
  return root.dump(2) + "\n";
}

Status WriteNodeLists(const std::string& dir, const std::vector<std::optional<NodeReport>>& nodes,
                      std::vector<std::string>* written) {
  if (Status made = MakeDirs(dir); !made) return made;
  std::string passing, failing;
  for (const auto& node : nodes) {
    if (!node) continue;
    (Worst(node->results) == CheckStatus::kFail ? failing : passing) += HostOf(*node) + "\n";
  }
  for (const auto& [name, text] : {std::pair{"passing_nodes.txt", passing}, std::pair{"failing_nodes.txt", failing}}) {
    std::string path = JoinPath(dir, name);
    if (Status status = WriteFileAtomic(path, text, kUserOutputMode); !status) return status;
    written->push_back(path);
  }
  return Status::Ok();
}

}  // namespace primus::preflight
