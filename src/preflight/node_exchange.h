// How the nodes of a multi-node preflight meet, without any agent: node 0
// listens on the job's MASTER_PORT (the port the workers' rendezvous will
// use, so reaching it proves the path the job needs; when something holds
// it, the next ports MASTER_PORT+2..+9 are tried, and a greeting line tells
// a peer it reached preflight and not a stranger). Every other node connects
// with retries until the timeout; both sides prove that they hold the job
// token (PRIMUS_JOB_TOKEN; HMAC-SHA256 over a nonce from each, the token
// never on the wire), and then the node sends its report (its checks and the
// facts that must agree across nodes). A peer that cannot prove itself, says
// nothing for 5 s or sends a line over 1 MiB is dropped; a report is read
// with the safe JSON reader (util/json_fields.h), so nothing a peer sends
// can end node 0. Node 0 then measures each peer in
// turn: round-trip latency, clock offset, and TCP bandwidth for about a
// quarter of a second, and finally sends each peer the job's verdict.
// Newline-delimited JSON and plain lines over one TCP connection per peer.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "preflight/check_result.h"
#include "util/error.h"

namespace primus::preflight {

struct NodeReport {
  int node_rank = 0;
  std::string host;
  std::vector<CheckResult> results;
  std::map<std::string, std::string> facts;  // "gpu_count", "gpu_model", "driver", "torch", "collective"
};

struct LinkMeasurement {
  double rtt_ms = 0;           // median of a few round trips
  double clock_offset_ms = 0;  // peer clock minus node 0's
  double bandwidth_gbs = 0;    // node 0 -> peer, GB/s
};

struct PeerConnections;  // the open connections, until the verdicts are sent

struct Gathered {
  std::vector<std::optional<NodeReport>> nodes;  // by node rank; nullopt: never reported
  std::map<int, LinkMeasurement> links;          // by peer node rank
  int port = 0;                                   // the port node 0 served on
  std::shared_ptr<PeerConnections> peers;
};

constexpr int kPortFallbacks = 8;  // MASTER_PORT, then +2 .. +9

// Node 0: serves on `port` (or a fallback), waits up to `timeout_s` for
// nnodes-1 peers, measures them, and sends each the verdict chosen by
// `decide` once every report is in.
Result<Gathered> GatherReports(int port, int nnodes, const NodeReport& own, const std::string& token,
                               double timeout_s, double bandwidth_seconds = 0.25);
// Sends every peer the job's verdict and closes the connections.
void SendVerdicts(Gathered& gathered, const std::string& verdict);

// Any other node: sends `report`, answers node 0's measurements and returns
// the verdict line node 0 sends ("PASS", "WARN" or "FAIL"). Errors name the
// address and what to check.
Result<std::string> SendReport(const std::string& master_addr, int port, const NodeReport& report,
                               const std::string& token, double timeout_s);

std::string ReportToJson(const NodeReport& report);
Result<NodeReport> ReportFromJson(const std::string& line);

}  // namespace primus::preflight
