// Fuzz target: the node agents' control-channel messages
// (job/control_protocol), read the way node 0 and the other nodes read
// them: each line parsed by the one safe reader (util/json_fields), then the
// hello, the handshake's challenge and auth, a start order, a failure
// report, a node's outcome and node 0's decision taken apart by the
// functions the coordinator and members call. A message from a peer must
// never bring an agent down.
//
// Input: JSON lines.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "job/control_protocol.h"
#include "util/json_fields.h"

using primus::job::Json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::optional<Json> parsed = primus::json_fields::ParseObject(input.substr(start, end - start));
    start = end + 1;
    if (!parsed) continue;  // the channel closes such a peer
    const Json& message = *parsed;

    primus::job::NodeIdentity node;
    std::string nonce;
    if (!primus::job::ParseHello(message, &node, &nonce)) (void)node.Describe();
    std::string type = primus::job::MessageType(message);
    (void)primus::job::MessageGeneration(message);
    (void)primus::job::MessageText(message, "reason");
    // As job_coordinator.cc and job_member.cc call them.
    std::string coordinator_nonce;
    (void)primus::job::CheckChallenge(message, "token", "0123456789abcdef0123456789abcdef", &coordinator_nonce);
    (void)primus::job::CheckAuth(message, "token", "0123456789abcdef0123456789abcdef", coordinator_nonce, message);
    primus::agent::GenerationLayout layout{1, 2, "10.0.0.1", 29500, "run"};
    (void)primus::job::ReadStartMessage(message, 4, &layout);
    if (type == "failure") (void)primus::job::FailureFromJson(primus::json_fields::Object(message, "failure"));
    if (type == "done") (void)primus::job::OutcomeFromJson(primus::json_fields::Object(message, "outcome"));
    // Whatever the fields hold, read directly too (a non-object, nulls, strings).
    (void)primus::job::FailureFromJson(message);
    (void)primus::job::OutcomeFromJson(message);
    if (message.contains("failure")) (void)primus::job::FailureFromJson(message["failure"]);
    if (message.contains("outcome")) (void)primus::job::OutcomeFromJson(message["outcome"]);
    if (type == "decision") (void)primus::job::DecisionFromJson(message);
  }
  return 0;
}
