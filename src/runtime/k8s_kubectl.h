// `k8s submit` talks to the cluster through kubectl: first whether kubectl
// is installed and reaches a cluster (a short timeout, so that a missing or
// unreachable cluster is said clearly instead of hanging), then `kubectl
// apply -f -` with the documents on its stdin, so that the token Secret
// never touches a disk. Errors are code 4 with kubectl's own words and a hint.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

struct Kubectl {
  std::string program = "kubectl";
  double check_timeout_s = 5;  // --request-timeout of the reachability check
};

// `kubectl version --request-timeout=5s`: the check, as it is run.
std::vector<std::string> ClusterCheckCommand(const Kubectl& kubectl);
// `kubectl apply -n NS -f -`.
std::vector<std::string> ApplyCommand(const Kubectl& kubectl, const std::string& namespace_name);

// Ok when kubectl runs and reaches a cluster; else an Error (code 4) saying
// which of the two failed, with `k8s manifest` as the way around it.
Status CheckCluster(const Kubectl& kubectl);

// Applies `yaml` (one or more documents) through kubectl's stdin; `what`
// names it in errors ("the token Secret").
Status Apply(const Kubectl& kubectl, const std::string& namespace_name, const std::string& yaml,
             const std::string& what);

}  // namespace primus::runtime
