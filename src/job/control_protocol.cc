#include "job/control_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "util/random.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace primus::job {

using agent::GenerationLayout;
using agent::IsRendezvous;
using agent::JobDecision;
using agent::NodeOutcome;
using agent::WorkerFailure;
using agent::kJobTokenVariable;
using agent::kStaticRendezvous;


namespace {

using json_fields::Bool;
using json_fields::IntegerIn;
using json_fields::Number;
using json_fields::SmallInteger;
using json_fields::Text;

constexpr std::string_view kCoordinatorProofLabel = "primus-cli control channel: coordinator";
constexpr std::string_view kMemberProofLabel = "primus-cli control channel: member";

// A peer's text on its way into our log lines: one line, no terminal codes.
std::string OneLine(const Json& json, const char* key, const std::string& fallback = "") {
  return EscapeControlCharacters(Text(json, key, fallback));
}

bool IsNonce(const std::string& text) {
  return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string Proof(std::string_view label, const std::string& token, const std::string& first,
                  const std::string& second, const std::string& bound = "") {
  std::string message = std::string(label) + "\n" + first + "\n" + second;
  if (!bound.empty()) message += "\n" + bound;
  return DigestHex(HmacSha256(token, message));
}

}  // namespace

bool IsHostAddress(std::string_view text) {
  return !text.empty() && text.size() <= 253 && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_' || c == ':' || c == '%' || c == '[' || c == ']';
  });
}

std::string NewNonce() { return RandomHex(16); }

std::string NodeIdentity::Describe() const {
  if (node_rank < 0) return "the node on " + (host.empty() ? std::string("?") : host);
  return "node " + std::to_string(node_rank) + " (" + (host.empty() ? "?" : host) + ")";
}

Json HelloMessage(const NodeIdentity& node, const std::string& nonce) {
  return Json{{"type", "hello"},
              {"nonce", nonce},
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
              {"run_id", layout.run_id},
              {"node_hosts", layout.node_hosts}};
}

std::optional<std::string> ReadStartMessage(const Json& message, int max_nnodes, GenerationLayout* layout) {
  // A field that is absent keeps this node's value; one that is present must fit.
  GenerationLayout read = *layout;
  auto has = [&](const char* key) { return message.is_object() && message.contains(key); };
  if (MessageGeneration(message) < 0) return "its generation is not a number from 0 up";
  if (has("nnodes")) {
    std::optional<int> nnodes = IntegerIn(message, "nnodes", 1, max_nnodes);
    if (!nnodes) return fmt::format("its nnodes is not from 1 to {}", max_nnodes);
    read.nnodes = *nnodes;
  }
  if (has("node_rank")) {
    std::optional<int> node_rank = IntegerIn(message, "node_rank", 0, read.nnodes - 1);
    if (!node_rank) return fmt::format("its node_rank is not from 0 to {}", read.nnodes - 1);
    read.node_rank = *node_rank;
  }
  if (has("master_addr")) {
    std::string master_addr = Text(message, "master_addr");
    if (!IsHostAddress(master_addr)) {
      return "its master_addr \"" + EscapeControlCharacters(master_addr.substr(0, 64)) + "\" is not a host";
    }
    read.master_addr = master_addr;
  }
  if (has("master_port")) {
    std::optional<int> master_port = IntegerIn(message, "master_port", 1, 65535);
    if (!master_port) return "its master_port is not a TCP port (1-65535)";
    read.master_port = *master_port;
  }
  if (has("run_id")) {
    std::string run_id = Text(message, "run_id", "?");
    if (!run_id.empty() && !IsSafePathComponent(run_id)) {
      return "its run_id \"" + EscapeControlCharacters(run_id.substr(0, 128)) +
             "\" is not a name of letters, digits, '-', '_' and '.'";
    }
    if (!run_id.empty()) read.run_id = run_id;
  }
  if (has("node_hosts")) {
    const Json& hosts = message["node_hosts"];
    if (!hosts.is_array() || (!hosts.empty() && hosts.size() != static_cast<size_t>(read.nnodes))) {
      return fmt::format("its node_hosts is not a list of {} addresses", read.nnodes);
    }
    std::vector<std::string> node_hosts;
    for (const Json& host : hosts) {
      std::string text = host.is_string() ? host.get<std::string>() : "";
      if (!IsHostAddress(text)) {
        return "its node_hosts holds \"" + EscapeControlCharacters(text.substr(0, 64)) + "\", which is not a host";
      }
      node_hosts.push_back(std::move(text));
    }
    read.node_hosts = std::move(node_hosts);
  }
  if (read.node_rank < 0 || read.node_rank >= read.nnodes) {
    return fmt::format("its layout puts this node at rank {} of {} nodes", read.node_rank, read.nnodes);
  }
  *layout = read;
  return std::nullopt;
}

std::optional<std::string> ParseHello(const Json& message, NodeIdentity* node, std::string* nonce) {
  if (MessageType(message) != "hello") return "expected a hello message first";
  if (message.contains("token") && !message.contains("nonce")) {
    return "primus-cli " + OneLine(message, "version", "?") + " on that node speaks an older control protocol (it "
           "sends the token): run the same primus-cli on every node";
  }
  for (const char* key : {"nonce", "version", "host"}) {
    if (!message.contains(key) || !message[key].is_string()) {
      return std::string("malformed hello: '") + key + "' must be a string";
    }
  }
  *nonce = Text(message, "nonce");
  if (!IsNonce(*nonce)) return "malformed hello: 'nonce' must be 32 hex digits";
  for (const char* key : {"nnodes", "nproc_per_node"}) {
    if (!IntegerIn(message, key, 1, 1 << 20)) {
      return std::string("malformed hello: '") + key + "' must be a positive integer";
    }
  }
  std::optional<int> node_rank = IntegerIn(message, "node_rank", -1, 1 << 20);
  if (!node_rank) return "malformed hello: 'node_rank' must be an integer from -1 (to be assigned) up";
  node->node_rank = *node_rank;
  node->nnodes = *SmallInteger(message, "nnodes");
  node->min_nnodes = SmallInteger(message, "min_nnodes").value_or(node->nnodes);
  if (node->min_nnodes < 1 || node->min_nnodes > node->nnodes) {
    return "malformed hello: 'min_nnodes' must be from 1 to nnodes";
  }
  node->rendezvous = Text(message, "rendezvous", kStaticRendezvous);
  if (!IsRendezvous(node->rendezvous)) return "malformed hello: 'rendezvous' is not static, c10d or etcd-v2";
  node->nproc_per_node = *SmallInteger(message, "nproc_per_node");
  node->version = Text(message, "version");
  if (node->version.size() > 64 || HasControlCharacter(node->version)) return "malformed hello: 'version' is not a version";
  node->host = Text(message, "host");
  if (!node->host.empty() && !IsHostAddress(node->host)) {
    return "malformed hello: 'host' \"" + EscapeControlCharacters(node->host.substr(0, 64)) + "\" is not a host name";
  }
  node->pid = SmallInteger(message, "pid").value_or(0);
  return std::nullopt;
}

Json ChallengeMessage(const std::string& token, const std::string& member_nonce, const std::string& own_nonce) {
  return Json{{"type", "challenge"},
              {"nonce", own_nonce},
              {"proof", Proof(kCoordinatorProofLabel, token, member_nonce, own_nonce)}};
}

std::optional<std::string> CheckChallenge(const Json& challenge, const std::string& token,
                                          const std::string& own_nonce, std::string* coordinator_nonce) {
  if (MessageType(challenge) != "challenge") return "it did not answer the hello with a challenge";
  *coordinator_nonce = Text(challenge, "nonce");
  if (!IsNonce(*coordinator_nonce)) return "its challenge is malformed";
  if (!ConstantTimeEquals(Text(challenge, "proof"), Proof(kCoordinatorProofLabel, token, own_nonce, *coordinator_nonce))) {
    return std::string("it could not prove that it holds this job's ") + kJobTokenVariable;
  }
  return std::nullopt;
}

Json AuthMessage(const std::string& token, const std::string& own_nonce, const std::string& coordinator_nonce,
                 const Json& hello) {
  return Json{{"type", "auth"},
              {"proof", Proof(kMemberProofLabel, token, coordinator_nonce, own_nonce, DigestHex(Sha256(hello.dump())))}};
}

bool CheckAuth(const Json& auth, const std::string& token, const std::string& member_nonce,
               const std::string& own_nonce, const Json& hello) {
  return MessageType(auth) == "auth" &&
         ConstantTimeEquals(Text(auth, "proof"),
                            Proof(kMemberProofLabel, token, own_nonce, member_nonce, DigestHex(Sha256(hello.dump()))));
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
  failure.host = OneLine(json, "host");
  failure.rank = IntegerIn(json, "rank", 0, INT_MAX).value_or(0);
  failure.local_rank = IntegerIn(json, "local_rank", 0, INT_MAX).value_or(0);
  failure.pid = SmallInteger(json, "pid").value_or(0);
  failure.attempt = IntegerIn(json, "attempt", 0, INT_MAX).value_or(0);
  failure.exit_code = IntegerIn(json, "exit_code", 0, 255).value_or(1);
  failure.signal = IntegerIn(json, "signal", 0, 128).value_or(0);
  failure.hung = Bool(json, "hung").value_or(false);
  failure.hang_timeout_s = Number(json, "hang_timeout_s").value_or(0.0);
  failure.timestamp = Number(json, "timestamp").value_or(0.0);
  failure.detected_at = Number(json, "detected_at").value_or(0.0);
  failure.log_file = OneLine(json, "log_file");
  failure.error_file = OneLine(json, "error_file");
  // A worker's message and traceback may span lines; no terminal codes.
  failure.message = EscapeControlCharacters(Text(json, "message"), /*keep_line_breaks=*/true);
  failure.traceback = EscapeControlCharacters(Text(json, "traceback"), /*keep_line_breaks=*/true);
  for (const Json& line : json_fields::Array(json, "log_tail")) {
    if (line.is_string()) failure.log_tail.push_back(EscapeControlCharacters(line.get<std::string>()));
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
  for (const Json& item : json_fields::Array(json, key)) {
    if (item.is_object()) failures.push_back(FailureFromJson(item));
  }
  return failures;
}

std::optional<WorkerFailure> OptionalFailure(const Json& json, const char* key) {
  const Json& failure = json_fields::Object(json, key);
  if (failure.empty()) return std::nullopt;
  return FailureFromJson(failure);
}

// A rank's place in a hang as a peer sends it: every text one line of at
// most kMaxPlaceText characters, at most kMaxPlaceGroups process groups.
constexpr size_t kMaxPlaceText = 512;
constexpr size_t kMaxPlaceGroups = 64;
constexpr size_t kMaxPlaces = 4096;

std::string PlaceText(const Json& json, const char* key) {
  std::string text = OneLine(json, key);
  if (text.size() > kMaxPlaceText) text.resize(kMaxPlaceText);
  return text;
}

Json PlacesToJson(const std::vector<analyze::RankPlace>& places) {
  Json list = Json::array();
  for (const analyze::RankPlace& place : places) {
    Json groups = Json::array();
    for (const analyze::GroupProgress& group : place.groups) {
      groups.push_back({{"group", group.group}, {"last_enqueued", group.last_enqueued},
                        {"last_completed", group.last_completed}, {"pending_seq", group.pending_seq},
                        {"pending_op", group.pending_op}, {"pending_sizes", group.pending_sizes},
                        {"pending_state", group.pending_state}, {"pending_frame", group.pending_frame}});
    }
    Json item{{"rank", place.rank}, {"host", place.host}, {"collective", place.collective}, {"frame", place.frame},
              {"readable", place.readable}, {"local_rank", place.local_rank}, {"gpu", place.gpu},
              {"has_flight_record", place.has_flight_record}, {"groups", groups}};
    if (place.last_step) item["last_step"] = *place.last_step;
    list.push_back(std::move(item));
  }
  return list;
}

std::vector<analyze::RankPlace> PlacesFrom(const Json& json) {
  std::vector<analyze::RankPlace> places;
  for (const Json& item : json_fields::Array(json, "hang_places")) {
    if (!item.is_object() || places.size() >= kMaxPlaces) continue;
    std::optional<int> rank = IntegerIn(item, "rank", 0, INT_MAX);
    if (!rank) continue;
    analyze::RankPlace place;
    place.rank = *rank;
    place.host = PlaceText(item, "host");
    place.collective = PlaceText(item, "collective");
    place.frame = PlaceText(item, "frame");
    place.readable = Bool(item, "readable").value_or(false);
    place.local_rank = IntegerIn(item, "local_rank", -1, INT_MAX).value_or(-1);
    place.gpu = PlaceText(item, "gpu");
    place.last_step = json_fields::Integer(item, "last_step");
    place.has_flight_record = Bool(item, "has_flight_record").value_or(false);
    for (const Json& entry : json_fields::Array(item, "groups")) {
      if (!entry.is_object() || place.groups.size() >= kMaxPlaceGroups) continue;
      analyze::GroupProgress group;
      group.group = PlaceText(entry, "group");
      group.last_enqueued = json_fields::Integer(entry, "last_enqueued").value_or(-1);
      group.last_completed = json_fields::Integer(entry, "last_completed").value_or(-1);
      group.pending_seq = json_fields::Integer(entry, "pending_seq").value_or(-1);
      group.pending_op = PlaceText(entry, "pending_op");
      group.pending_sizes = PlaceText(entry, "pending_sizes");
      group.pending_state = PlaceText(entry, "pending_state");
      group.pending_frame = PlaceText(entry, "pending_frame");
      if (!group.group.empty()) place.groups.push_back(std::move(group));
    }
    places.push_back(std::move(place));
  }
  return places;
}

}  // namespace

Json OutcomeToJson(const NodeOutcome& outcome) {
  Json json{{"exit_code", outcome.exit_code},
            {"agent_signal", outcome.agent_signal},
            {"stopped_by_job", outcome.stopped_by_job},
            {"stuck_at_exit", outcome.stuck_at_exit},
            {"other_failures", FailureList(outcome.other_failures)}};
  if (outcome.root_cause) json["root_cause"] = FailureToJson(*outcome.root_cause);
  if (!outcome.hang_places.empty()) json["hang_places"] = PlacesToJson(outcome.hang_places);
  return json;
}

NodeOutcome OutcomeFromJson(const Json& json) {
  NodeOutcome outcome;
  outcome.exit_code = IntegerIn(json, "exit_code", 0, 255).value_or(1);
  outcome.agent_signal = IntegerIn(json, "agent_signal", 0, 128).value_or(0);
  outcome.stopped_by_job = Bool(json, "stopped_by_job").value_or(false);
  for (const Json& rank : json_fields::Array(json, "stuck_at_exit")) {
    if (std::optional<int> value = IntegerIn(Json{{"r", rank}}, "r", 0, INT_MAX)) outcome.stuck_at_exit.push_back(*value);
  }
  outcome.root_cause = OptionalFailure(json, "root_cause");
  outcome.other_failures = FailuresFrom(json, "other_failures");
  outcome.hang_places = PlacesFrom(json);
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
  if (!decision.excluded_hosts.empty()) {
    json["excluded_hosts"] = decision.excluded_hosts;
    json["exclusion_reason"] = decision.exclusion_reason;
  }
  return json;
}

JobDecision DecisionFromJson(const Json& json) {
  JobDecision decision;
  decision.restart = Bool(json, "restart").value_or(false);
  decision.exit_code = IntegerIn(json, "exit_code", 0, 255).value_or(1);
  decision.restarts = IntegerIn(json, "restarts", 0, INT_MAX).value_or(0);
  decision.membership_changed = Bool(json, "membership_changed").value_or(false);
  decision.next_nnodes = IntegerIn(json, "next_nnodes", 0, 1 << 20).value_or(0);
  decision.reason = OneLine(json, "reason");
  decision.root_cause = OptionalFailure(json, "root_cause");
  decision.other_failures = FailuresFrom(json, "other_failures");
  for (const Json& host : json_fields::Array(json, "excluded_hosts")) {
    if (host.is_string() && IsHostAddress(host.get<std::string>()) && decision.excluded_hosts.size() < 64) {
      decision.excluded_hosts.push_back(host.get<std::string>());
    }
  }
  decision.exclusion_reason = OneLine(json, "exclusion_reason");
  return decision;
}

std::string MessageType(const Json& message) { return Text(message, "type"); }

int MessageGeneration(const Json& message) { return IntegerIn(message, "generation", 0, INT_MAX).value_or(-1); }

std::string MessageText(const Json& message, const char* key, const std::string& fallback) {
  return OneLine(message, key, fallback);
}

}  // namespace primus::job
