// Fuzz target: the node agents' control-channel messages
// (agent/control_protocol), read the way node 0 and the other nodes read
// them: each line parsed as JSON without exceptions, then the hello, a
// failure report, a node's outcome and node 0's decision taken apart by the
// functions the coordinator and members call. A message from a peer must
// never bring an agent down.
//
// Input: JSON lines.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/control_protocol.h"

using primus::agent::Json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    Json message = Json::parse(input.begin() + static_cast<long>(start), input.begin() + static_cast<long>(end),
                               nullptr, /*allow_exceptions=*/false);
    start = end + 1;
    if (message.is_discarded() || !message.is_object()) continue;  // the channel closes such a peer

    primus::agent::NodeIdentity node;
    std::string token;
    (void)primus::agent::ParseHello(message, &node, &token);
    std::string type = primus::agent::MessageType(message);
    (void)primus::agent::MessageGeneration(message);
    // As job_coordinator.cc and job_member.cc call them.
    if (type == "failure") (void)primus::agent::FailureFromJson(primus::agent::ObjectField(message, "failure"));
    if (type == "done") (void)primus::agent::OutcomeFromJson(primus::agent::ObjectField(message, "outcome"));
    // Whatever the fields hold, read directly too (a non-object, nulls, strings).
    (void)primus::agent::FailureFromJson(message);
    (void)primus::agent::OutcomeFromJson(message);
    if (message.contains("failure")) (void)primus::agent::FailureFromJson(message["failure"]);
    if (message.contains("outcome")) (void)primus::agent::OutcomeFromJson(message["outcome"]);
    if (type == "decision") (void)primus::agent::DecisionFromJson(message);
  }
  return 0;
}
