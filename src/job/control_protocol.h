// The messages node agents exchange over the control channel, one JSON object
// per line over TCP (readable in a packet capture, easy to extend). Node 0's
// agent coordinates; every other agent is a member. Each side first proves
// that it holds the job token (PRIMUS_JOB_TOKEN), which never crosses the
// wire: HMAC-SHA256 keyed by the token over both sides' random nonces.
//
//   member -> node 0   hello {nonce, node_rank, nnodes, min_nnodes, nproc_per_node, rendezvous, version, host}
//   node 0 -> member   challenge {nonce, proof}     proof = HMAC(token, coordinator label, member nonce, own nonce)
//   member -> node 0   auth {proof}                 proof = HMAC(token, member label, both nonces, SHA-256 of the hello)
//   node 0 -> member   welcome {standby} | refuse {reason}
//
// A member takes nothing from node 0 before a valid challenge (a program
// that squats the control port learns nothing and can neither start, stop
// nor end the member); node 0 takes nothing from a member before a valid
// auth. Every field of every message is validated where it is read: a
// field that is missing, of the wrong type or out of range is refused or
// read as a safe default, and a peer's text reaches our log lines escaped
// (one line, no terminal codes). The integrity of later messages rests on
// TCP: an attacker on the path between the nodes is not in scope.
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

#include "agent/job_link.h"
#include "agent/launch_spec.h"
#include "util/json_fields.h"

namespace primus::job {

using Json = nlohmann::json;


// What a node says about itself when it joins.
struct NodeIdentity {
  int node_rank = 0;  // -1: to be assigned by the coordinator (c10d, etcd-v2)
  int nnodes = 1;     // the most nodes the job may have
  int nproc_per_node = 1;
  std::string version;  // primus-cli version
  std::string host;
  int pid = 0;
  int min_nnodes = 0;  // the fewest nodes it may run with; 0: nnodes (a fixed-size job)
  std::string rendezvous = agent::kStaticRendezvous;

  int Minimum() const { return min_nnodes > 0 ? min_nnodes : nnodes; }

  // "node 1 (host2)", or "the node on host2" before it has a rank
  std::string Describe() const;
};


// A host name or address as a peer may send it: letters, digits and
// . - _ : % [ ], at most 253 characters (nothing that could break a log
// line, a path or a command).
bool IsHostAddress(std::string_view text);

// 32 random hex digits.
std::string NewNonce();
Json HelloMessage(const NodeIdentity& node, const std::string& nonce);
// An error text when `message` is not a well-formed hello; else the node and its nonce.
std::optional<std::string> ParseHello(const Json& message, NodeIdentity* node, std::string* nonce);
// Node 0's answer to a hello: its nonce and its proof.
Json ChallengeMessage(const std::string& token, const std::string& member_nonce, const std::string& own_nonce);
// The member's check of node 0's challenge: nullopt when node 0 proved it
// holds `token` (coordinator_nonce is then set), else why not.
std::optional<std::string> CheckChallenge(const Json& challenge, const std::string& token,
                                          const std::string& own_nonce, std::string* coordinator_nonce);
// The member's proof, bound to the hello it sent.
Json AuthMessage(const std::string& token, const std::string& own_nonce, const std::string& coordinator_nonce,
                 const Json& hello);
bool CheckAuth(const Json& auth, const std::string& token, const std::string& member_nonce,
               const std::string& own_nonce, const Json& hello);

// Why `joining` cannot be part of the job node 0 (`reference`) runs: different
// node counts, workers per node, rendezvous or version, or a node rank out of
// range (or given where the coordinator hands them out). nullopt when it fits.
std::optional<std::string> Inconsistency(const NodeIdentity& reference, const NodeIdentity& joining);

// The start message carries a GenerationLayout (agent/job_link.h).
Json StartMessage(int generation, const agent::GenerationLayout& layout);
// Reads a start message into `layout`, which is left as it was when any
// field is out of place (then the text says which): node_rank within
// nnodes, nnodes from 1 to `max_nnodes`, master_addr a host, master_port a
// port, run_id empty (keep this node's) or a safe path component. A field
// the message lacks keeps its value.
std::optional<std::string> ReadStartMessage(const Json& message, int max_nnodes, agent::GenerationLayout* layout);

Json FailureToJson(const agent::WorkerFailure& failure);
agent::WorkerFailure FailureFromJson(const Json& json);

// A node's end of a generation (done) and node 0's verdict (decision).
Json OutcomeToJson(const agent::NodeOutcome& outcome);
agent::NodeOutcome OutcomeFromJson(const Json& json);
Json DecisionToJson(const agent::JobDecision& decision, int generation);
agent::JobDecision DecisionFromJson(const Json& json);



// The "type" field, or "" when absent. Fields are read with util/json_fields.h.
std::string MessageType(const Json& message);
// The "generation" field, or -1 when it is not a number from 0 up.
int MessageGeneration(const Json& message);
// A text field of a peer's message for our log lines: one line, escaped.
std::string MessageText(const Json& message, const char* key, const std::string& fallback = "");

}  // namespace primus::job
