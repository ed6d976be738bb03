// The messages node agents exchange over the control channel, one JSON object
// per line over TCP (readable in a packet capture, easy to extend). Node 0's
// agent coordinates; every other agent is a member:
//
//   member -> node 0   hello {token, node_rank, nnodes, nproc_per_node, version, host}
//   node 0 -> member   welcome | refuse {reason}
//   node 0 -> all      start {generation}             every node joined: start the workers
//   member -> node 0   failure {generation, failure}  a local worker failed or hung, or the agent was signalled
//   node 0 -> all      stop {generation, reason}      tear down your workers now
//   member -> node 0   done {generation, exit_code, root_cause, other_failures, agent_signal}
//   node 0 -> all      decision {generation, restart, exit_code, root_cause, ...}
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
  int node_rank = 0;
  int nnodes = 1;
  int nproc_per_node = 1;
  std::string version;  // primus-cli version
  std::string host;
  int pid = 0;

  // "node 1 (host2)"
  std::string Describe() const;
};

Json HelloMessage(const NodeIdentity& node, const std::string& token);
// An error text when `message` is not a well-formed hello.
std::optional<std::string> ParseHello(const Json& message, NodeIdentity* node, std::string* token);

// Why `joining` cannot be part of the job node 0 (`reference`) runs: different
// node count, workers per node or version, or a node rank out of range.
// nullopt when it fits.
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
