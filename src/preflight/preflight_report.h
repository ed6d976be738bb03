// What preflight prints and writes: one node's checks as a table (status,
// value, expectation, and the fix under every line that did not pass), the
// per-node summary node 0 prints for a multi-node job, JSON (--json FILE),
// and passing_nodes.txt / failing_nodes.txt (one host per line, ready for
// `srun --nodelist` / `--exclude`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "preflight/node_exchange.h"
#include "util/error.h"

namespace primus::preflight {

// The job's verdict: FAIL if any node failed a check, else WARN if any warned.
CheckStatus JobStatus(const std::vector<std::optional<NodeReport>>& nodes);

std::string FormatNodeChecks(const NodeReport& report);
std::string FormatJobSummary(const std::vector<std::optional<NodeReport>>& nodes);
std::string ReportJson(const std::vector<std::optional<NodeReport>>& nodes);
// Writes both lists into `dir` (created); returns their paths in `written`.
Status WriteNodeLists(const std::string& dir, const std::vector<std::optional<NodeReport>>& nodes,
                      std::vector<std::string>* written);

}  // namespace primus::preflight
