#include "agent/control_protocol.h"

#include <climits>
#include <cmath>

namespace primus::agent {

int IntField(const Json& json, const char* key, int fallback) {
  if (!json.is_object()) return fallback;
  auto it = json.find(key);
  if (it == json.end()) return fallback;
  if (it->is_number_unsigned()) {
    uint64_t value = it->get<uint64_t>();
    return value <= static_cast<uint64_t>(INT_MAX) ? static_cast<int>(value) : fallback;
  }
  if (it->is_number_integer()) {
    int64_t value = it->get<int64_t>();
    return value >= INT_MIN && value <= INT_MAX ? static_cast<int>(value) : fallback;
  }
  return fallback;
}

double DoubleField(const Json& json, const char* key, double fallback) {
  if (!json.is_object()) return fallback;
  auto it = json.find(key);
  if (it == json.end() || !it->is_number()) return fallback;
  double value = it->get<double>();
  return std::isfinite(value) ? value : fallback;
}

bool BoolField(const Json& json, const char* key, bool fallback) {
  if (!json.is_object()) return fallback;
  auto it = json.find(key);
  return it != json.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string StringField(const Json& json, const char* key, const std::string& fallback) {
  if (!json.is_object()) return fallback;
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : fallback;
}

Json ObjectField(const Json& json, const char* key) {
  if (!json.is_object()) return Json::object();
  auto it = json.find(key);
  return it != json.end() && it->is_object() ? *it : Json::object();
}

std::string NodeIdentity::Describe() const {
  if (node_rank < 0) return "the node on " + (host.empty() ? std::string("?") : host);
  return "node " + std::to_string(node_rank) + " (" + (host.empty() ? "?" : host) + ")";
}

Json HelloMessage(const NodeIdentity& node, const std::string& token) {
  return Json{{"type", "hello"},
              {"token", token},
              {"node_rank", node.node_rank},
              {"nnodes", node.nnodes},
              {"min_nnodes", node.Minimum()},
              {"nproc_per_node", node.nproc_per_node},
              {"rendezvous", node.rendezvous},
              {"version", node.version},
              {"host", node.host},
              {"pid", node.pid}};
}

Json StartMessage(int generation, const GenerationLayout& layout) {
  return Json{{"type", "start"},
              {"generation", generation},
              {"node_rank", layout.node_rank},
              {"nnodes", layout.nnodes},
              {"master_addr", layout.master_addr},
              {"master_port", layout.master_port},
              {"run_id", layout.run_id}};
}

void ReadStartMessage(const Json& message, GenerationLayout* layout) {
  layout->node_rank = IntField(message, "node_rank", layout->node_rank);
  layout->nnodes = IntField(message, "nnodes", layout->nnodes);
  layout->master_addr = StringField(message, "master_addr", layout->master_addr);
  layout->master_port = IntField(message, "master_port", layout->master_port);
  layout->run_id = StringField(message, "run_id", layout->run_id);
}

std::optional<std::string> ParseHello(const Json& message, NodeIdentity* node, std::string* token) {
  if (MessageType(message) != "hello") return "expected a hello message first";
  for (const char* key : {"token", "version", "host"}) {
    if (!message.contains(key) || !message[key].is_string()) {
      return std::string("malformed hello: '") + key + "' must be a string";
    }
  }
  for (const char* key : {"nnodes", "nproc_per_node"}) {
    if (!message.contains(key) || !message[key].is_number_integer() || IntField(message, key, -1) < 1) {
      return std::string("malformed hello: '") + key + "' must be a positive integer";
    }
  }
  if (!message.contains("node_rank") || !message["node_rank"].is_number_integer() ||
      IntField(message, "node_rank", -2) < -1) {
    return "malformed hello: 'node_rank' must be an integer from -1 (to be assigned) up";
  }
  *token = message["token"].get<std::string>();
  node->node_rank = IntField(message, "node_rank", 0);
  node->nnodes = IntField(message, "nnodes", 0);
  node->min_nnodes = IntField(message, "min_nnodes", node->nnodes);
  if (node->min_nnodes < 1 || node->min_nnodes > node->nnodes) {
    return "malformed hello: 'min_nnodes' must be from 1 to nnodes";
  }
  node->rendezvous = StringField(message, "rendezvous", kStaticRendezvous);
  node->nproc_per_node = IntField(message, "nproc_per_node", 0);
  node->version = message["version"].get<std::string>();
  node->host = message["host"].get<std::string>();
  node->pid = IntField(message, "pid", 0);
  return std::nullopt;
}

std::optional<std::string> Inconsistency(const NodeIdentity& reference, const NodeIdentity& joining) {
  std::vector<std::string> problems;
  if (joining.version != reference.version) {
    problems.push_back("primus-cli " + joining.version + " on " + joining.Describe() + " but " +
                       reference.version + " on " + reference.Describe());
  }
  auto node_count = [](const NodeIdentity& node) {
    return node.Minimum() == node.nnodes ? std::to_string(node.nnodes)
                                         : std::to_string(node.Minimum()) + ":" + std::to_string(node.nnodes);
  };
  if (joining.nnodes != reference.nnodes || joining.Minimum() != reference.Minimum()) {
    problems.push_back("nnodes " + node_count(joining) + " on " + joining.Describe() + " but " +
                       node_count(reference) + " on " + reference.Describe());
  }
  if (joining.rendezvous != reference.rendezvous) {
    problems.push_back("rendezvous " + joining.rendezvous + " on " + joining.Describe() + " but " +
                       reference.rendezvous + " on " + reference.Describe());
  }
  if (joining.nproc_per_node != reference.nproc_per_node) {
    problems.push_back("nproc_per_node " + std::to_string(joining.nproc_per_node) + " on " + joining.Describe() +
                       " but " + std::to_string(reference.nproc_per_node) + " on " + reference.Describe() +
                       " (world size " + std::to_string(joining.nnodes * joining.nproc_per_node) + " vs " +
                       std::to_string(reference.nnodes * reference.nproc_per_node) + ")");
  }
  bool assigned = reference.rendezvous != kStaticRendezvous;
  if (assigned && joining.node_rank != -1) {
    problems.push_back(joining.Describe() + " brings its own node rank, but with the " + reference.rendezvous +
                       " rendezvous node ranks are handed out as nodes join");
  } else if (!assigned && (joining.node_rank < 1 || joining.node_rank >= reference.nnodes)) {
    problems.push_back(joining.Describe() + " has node rank " + std::to_string(joining.node_rank) +
                       ", outside 1.." + std::to_string(reference.nnodes - 1));
  }
  if (problems.empty()) return std::nullopt;
  std::string text;
  for (const std::string& problem : problems) text += (text.empty() ? "" : "; ") + problem;
  return text;
}

bool TokensEqual(const std::string& a, const std::string& b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return difference == 0;
}

Json FailureToJson(const WorkerFailure& failure) {
  return Json{{"host", failure.host},
              {"rank", failure.rank},
              {"local_rank", failure.local_rank},
              {"pid", failure.pid},
              {"attempt", failure.attempt},
              {"exit_code", failure.exit_code},
              {"signal", failure.signal},
              {"hung", failure.hung},
              {"hang_timeout_s", failure.hang_timeout_s},
              {"timestamp", failure.timestamp},
              {"detected_at", failure.detected_at},
              {"log_file", failure.log_file},
              {"error_file", failure.error_file},
              {"message", failure.message},
              {"traceback", failure.traceback},
              {"log_tail", failure.log_tail}};
}

WorkerFailure FailureFromJson(const Json& json) {
  WorkerFailure failure;
  failure.host = StringField(json, "host");
  failure.rank = IntField(json, "rank", 0);
  failure.local_rank = IntField(json, "local_rank", 0);
  failure.pid = IntField(json, "pid", 0);
  failure.attempt = IntField(json, "attempt", 0);
  failure.exit_code = IntField(json, "exit_code", 0);
  failure.signal = IntField(json, "signal", 0);
  failure.hung = BoolField(json, "hung", false);
  failure.hang_timeout_s = DoubleField(json, "hang_timeout_s", 0.0);
  failure.timestamp = DoubleField(json, "timestamp", 0.0);
  failure.detected_at = DoubleField(json, "detected_at", 0.0);
  failure.log_file = StringField(json, "log_file");
  failure.error_file = StringField(json, "error_file");
  failure.message = StringField(json, "message");
  failure.traceback = StringField(json, "traceback");
  if (json.is_object() && json.contains("log_tail") && json["log_tail"].is_array()) {
    for (const Json& line : json["log_tail"]) {
      if (line.is_string()) failure.log_tail.push_back(line.get<std::string>());
    }
  }
  return failure;
}

namespace {

Json FailureList(const std::vector<WorkerFailure>& failures) {
  Json list = Json::array();
  for (const WorkerFailure& failure : failures) list.push_back(FailureToJson(failure));
  return list;
}

std::vector<WorkerFailure> FailuresFrom(const Json& json, const char* key) {
  std::vector<WorkerFailure> failures;
  if (json.is_object() && json.contains(key) && json[key].is_array()) {
    for (const Json& item : json[key]) {
      if (item.is_object()) failures.push_back(FailureFromJson(item));
    }
  }
  return failures;
}

std::optional<WorkerFailure> OptionalFailure(const Json& json, const char* key) {
  if (!json.is_object() || !json.contains(key) || !json[key].is_object()) return std::nullopt;
  return FailureFromJson(json[key]);
}

}  // namespace

Json OutcomeToJson(const NodeOutcome& outcome) {
  Json json{{"exit_code", outcome.exit_code},
            {"agent_signal", outcome.agent_signal},
            {"stopped_by_job", outcome.stopped_by_job},
            {"stuck_at_exit", outcome.stuck_at_exit},
            {"other_failures", FailureList(outcome.other_failures)}};
  if (outcome.root_cause) json["root_cause"] = FailureToJson(*outcome.root_cause);
  return json;
}

NodeOutcome OutcomeFromJson(const Json& json) {
  NodeOutcome outcome;
  outcome.exit_code = IntField(json, "exit_code", 1);
  outcome.agent_signal = IntField(json, "agent_signal", 0);
  outcome.stopped_by_job = BoolField(json, "stopped_by_job", false);
  if (json.is_object() && json.contains("stuck_at_exit") && json["stuck_at_exit"].is_array()) {
    for (const Json& rank : json["stuck_at_exit"]) {
      if (rank.is_number_integer()) outcome.stuck_at_exit.push_back(IntField(Json{{"r", rank}}, "r", 0));
    }
  }
  outcome.root_cause = OptionalFailure(json, "root_cause");
  outcome.other_failures = FailuresFrom(json, "other_failures");
  return outcome;
}

Json DecisionToJson(const JobDecision& decision, int generation) {
  Json json{{"type", "decision"},
            {"generation", generation},
            {"restart", decision.restart},
            {"exit_code", decision.exit_code},
            {"restarts", decision.restarts},
            {"membership_changed", decision.membership_changed},
            {"next_nnodes", decision.next_nnodes},
            {"reason", decision.reason},
            {"other_failures", FailureList(decision.other_failures)}};
  if (decision.root_cause) json["root_cause"] = FailureToJson(*decision.root_cause);
  return json;
}

JobDecision DecisionFromJson(const Json& json) {
  JobDecision decision;
  decision.restart = BoolField(json, "restart", false);
  decision.exit_code = IntField(json, "exit_code", 1);
  decision.restarts = IntField(json, "restarts", 0);
  decision.membership_changed = BoolField(json, "membership_changed", false);
  decision.next_nnodes = IntField(json, "next_nnodes", 0);
  decision.reason = StringField(json, "reason");
  decision.root_cause = OptionalFailure(json, "root_cause");
  decision.other_failures = FailuresFrom(json, "other_failures");
  return decision;
}

std::string MessageType(const Json& message) {
  if (!message.is_object() || !message.contains("type") || !message["type"].is_string()) return "";
  return message["type"].get<std::string>();
}

int MessageGeneration(const Json& message) {
  return IntField(message, "generation", -1);
}

}  // namespace primus::agent
