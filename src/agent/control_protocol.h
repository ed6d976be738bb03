// The messages node agents exchange over the control channel, one JSON object
// per line over TCP (readable in a packet capture, easy to extend). Node 0's
// agent coordinates; every other agent is a member:
//
//   member -> node 0   hello {token, node_rank, nnodes, min_nnodes, nproc_per_node, rendezvous, version, host}
//   node 0 -> member   welcome {standby} | refuse {reason}
//   node 0 -> each     start {generation, node_rank, nnodes, master_addr, master_port}
//                                                     the job's nodes are here: start the workers
//   member -> node 0   failure {generation, failure}  a local worker failed or hung, or the agent was signalled
//   node 0 -> all      stop {generation, reason}      tear down your workers now
//   member -> node 0   done {generation, exit_code, root_cause, other_failures, agent_signal}
//   node 0 -> all      decision {generation, restart, exit_code, root_cause, ...}
//   member -> node 0   telemetry {generation, sample}  this node's sample, every telemetry interval
//                                                     (docs/monitor.md); node 0 keeps the job's view
//   both ways          heartbeat                      when nothing else was sent for an interval
//
// This file holds the message shapes, the WorkerFailure encoding and the check
// that a joining node belongs to the same job; the sockets are elsewhere.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/launch_spec.h"

namespace primus::agent {

using Json = nlohmann::json;

// The environment variable carrying the per-job secret; the launching side
// (the Slurm runtime, the pod's Secret) creates it, every agent reads it.
inline constexpr char kJobTokenVariable[] = "PRIMUS_JOB_TOKEN";

// What a node says about itself when it joins.
struct NodeIdentity {
  int node_rank = 0;  // -1: to be assigned by the coordinator (c10d, etcd-v2)
  int nnodes = 1;     // the most nodes the job may have
  int nproc_per_node = 1;
  std::string version;  // primus-cli version
  std::string host;
  int pid = 0;
  int min_nnodes = 0;  // the fewest nodes it may run with; 0: nnodes (a fixed-size job)
  std::string rendezvous = kStaticRendezvous;

  int Minimum() const { return min_nnodes > 0 ? min_nnodes : nnodes; }

  // "node 1 (host2)", or "the node on host2" before it has a rank
  std::string Describe() const;
};

// A node's place in one generation of the job, sent in each start message.
// In a fixed-size job it never changes; in an elastic one node ranks are
// renumbered and nnodes changes as nodes are lost and join.
struct GenerationLayout {
  int node_rank = 0;
  int nnodes = 1;
  std::string master_addr;  // the workers' MASTER_ADDR and MASTER_PORT
  int master_port = 0;
  std::string run_id;       // the coordinator's: one TORCHELASTIC_RUN_ID for the job ("" keeps the node's own)
};
Json StartMessage(int generation, const GenerationLayout& layout);
// Fills the fields the start message carries; those it lacks keep their value.
void ReadStartMessage(const Json& message, GenerationLayout* layout);

Json HelloMessage(const NodeIdentity& node, const std::string& token);
// An error text when `message` is not a well-formed hello.
std::optional<std::string> ParseHello(const Json& message, NodeIdentity* node, std::string* token);

// Why `joining` cannot be part of the job node 0 (`reference`) runs: different
// node counts, workers per node, rendezvous or version, or a node rank out of
// range (or given where the coordinator hands them out). nullopt when it fits.
std::optional<std::string> Inconsistency(const NodeIdentity& reference, const NodeIdentity& joining);

// Compares without leaking the matching prefix length through timing.
bool TokensEqual(const std::string& a, const std::string& b);

Json FailureToJson(const WorkerFailure& failure);
WorkerFailure FailureFromJson(const Json& json);

// The end of one generation on one node, as its agent reports it.
struct NodeOutcome {
  int exit_code = 0;
  int agent_signal = 0;
  bool stopped_by_job = false;
  std::vector<int> stuck_at_exit;  // ranks stopped after the exit grace, their work done
  std::optional<WorkerFailure> root_cause;
  std::vector<WorkerFailure> other_failures;
};
Json OutcomeToJson(const NodeOutcome& outcome);
NodeOutcome OutcomeFromJson(const Json& json);

// Node 0's verdict on a generation, the same for every node.
struct JobDecision {
  bool restart = false;
  int exit_code = 0;
  int restarts = 0;         // restarts of the whole job so far (including this one when restart)
  bool membership_changed = false;  // an elastic restart: a node was lost or joined (not counted in restarts)
  int next_nnodes = 0;      // the nodes of the next generation, when restart
  std::string reason;       // why the job ends or restarts, for the log
  std::optional<WorkerFailure> root_cause;
  std::vector<WorkerFailure> other_failures;
};
Json DecisionToJson(const JobDecision& decision, int generation);
JobDecision DecisionFromJson(const Json& json);

// Field readers that never throw: a missing field, one of the wrong type or
// out of range, or a message that is not an object reads as `fallback` (a
// peer's bad message must not end the agent that reads it).
int IntField(const Json& json, const char* key, int fallback);
double DoubleField(const Json& json, const char* key, double fallback);
bool BoolField(const Json& json, const char* key, bool fallback);
std::string StringField(const Json& json, const char* key, const std::string& fallback = "");
Json ObjectField(const Json& json, const char* key);  // {} when absent or not an object

// The "type" field, or "" when absent.
std::string MessageType(const Json& message);
int MessageGeneration(const Json& message);

}  // namespace primus::agent
