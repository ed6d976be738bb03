// What only node 0 can judge, once every node reported: facts that must be
// the same everywhere (GPU count and model, driver, torch, collective
// library: the most common value is taken as expected and every node that
// differs fails), clock skew against node 0, the latency and bandwidth node 0
// measured to each node, and nodes that never reported.
#pragma once

#include <string>
#include <vector>

#include "preflight/node_exchange.h"

namespace primus::preflight {

// Appends the cross-node results to each node's report; a node that never
// reported gets a report of its own holding one FAIL (its host from
// `expected_hosts` when known, e.g. the Slurm node list).
void AddCrossNodeChecks(Gathered* gathered, const std::vector<std::string>& expected_hosts, double timeout_s);

}  // namespace primus::preflight
