#include "runtime/bad_node_relaunch.h"

#include <algorithm>

#include "util/log.h"
#include "util/strings.h"

namespace primus::runtime {

std::vector<std::string> SpareNodesOption(int spare) {
  return {"--set", "direct.spare_nodes=" + std::to_string(spare)};
}

std::vector<std::string> HostsLeft(const std::vector<std::string>& pool, const std::vector<std::string>& excluded) {
  std::vector<std::string> left;
  for (const std::string& host : pool) {
    if (std::find(excluded.begin(), excluded.end(), host) == excluded.end()) left.push_back(host);
  }
  return left;
}

Result<int> RunExcludingBadNodes(const RelaunchPlan& plan, const RunStep& run) {
  std::vector<std::string> excluded;
  for (int relaunch = 0;; ++relaunch) {
    int spare = plan.pool.empty() ? 1 : static_cast<int>(HostsLeft(plan.pool, excluded).size()) - plan.nodes;
    if (plan.continue_elsewhere) spare = std::max(spare, 1);
    auto end = run(excluded, std::max(spare, 0), relaunch);
    if (!end.ok()) return end.error();
    if (end->exit_code == 0 || end->excluded_hosts.empty()) return end->exit_code;
    for (const std::string& host : end->excluded_hosts) {
      if (std::find(excluded.begin(), excluded.end(), host) == excluded.end()) excluded.push_back(host);
    }
    std::string named = Join(end->excluded_hosts, ", ");
    int restart = plan.restarts_before + relaunch + 1;
    if (restart > plan.max_relaunches) {
      log::Error("{} left the job as a bad node, and no restart is left (direct.max_restarts {}): the job ends with "
                 "exit code {}", named, plan.max_relaunches, end->exit_code);
      return end->exit_code;
    }
    std::vector<std::string> left = HostsLeft(plan.pool, excluded);
    if (!plan.pool.empty() && static_cast<int>(left.size()) < plan.nodes) {
      if (plan.continue_elsewhere) {
        log::Warn("{} left the job as a bad node, and {} node{} remain{} for a job of {}: the job goes on elsewhere "
                  "without {} (restart {} of {})", named, left.size(), left.size() == 1 ? "" : "s",
                  left.size() == 1 ? "s" : "", plan.nodes,
                  Join(excluded, ", "), restart, plan.max_relaunches);
        return plan.continue_elsewhere(excluded, restart);
      }
      log::Error("{} left the job as a bad node, and {} node{} remain{} for a job of {}: the job ends with exit code {}",
                 named, left.size(), left.size() == 1 ? "" : "s", left.size() == 1 ? "s" : "", plan.nodes, end->exit_code);
      return end->exit_code;
    }
    log::Warn("{} left the job as a bad node; starting it again without {} (restart {} of {})", named,
              Join(excluded, ", "), restart, plan.max_relaunches);
  }
}

}  // namespace primus::runtime
