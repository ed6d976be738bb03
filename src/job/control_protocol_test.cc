#include "job/control_protocol.h"

#include <gtest/gtest.h>

namespace primus::job {

using agent::GenerationLayout;
using agent::JobDecision;
using agent::NodeOutcome;
using agent::WorkerFailure;

namespace {

NodeIdentity Node(int rank, int nnodes = 2, int nproc = 8, std::string version = "0.1.0") {
  NodeIdentity node;
  node.node_rank = rank;
  node.nnodes = nnodes;
  node.nproc_per_node = nproc;
  node.version = std::move(version);
  node.host = "host" + std::to_string(rank + 1);
  return node;
}

TEST(ControlProtocolTest, HelloRoundTrips) {
  NodeIdentity parsed;
  std::string nonce;
  std::string sent = NewNonce();
  ASSERT_FALSE(ParseHello(HelloMessage(Node(1, 4, 2), sent), &parsed, &nonce));
  EXPECT_EQ(nonce, sent);
  EXPECT_EQ(parsed.node_rank, 1);
  EXPECT_EQ(parsed.nnodes, 4);
  EXPECT_EQ(parsed.nproc_per_node, 2);
  EXPECT_EQ(parsed.host, "host2");
}

TEST(ControlProtocolTest, MalformedHelloIsExplained) {
  NodeIdentity parsed;
  std::string nonce;
  auto problem = ParseHello(Json{{"type", "hello"}, {"nonce", 5}}, &parsed, &nonce);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("malformed hello"), std::string::npos);
  // An agent of the previous version sent its token: told to match versions, not "malformed".
  problem = ParseHello(Json{{"type", "hello"}, {"token", "x"}, {"version", "0.1.0"}}, &parsed, &nonce);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("primus-cli 0.1.0 on that node speaks an older control protocol"), std::string::npos)
      << *problem;
  EXPECT_TRUE(ParseHello(Json{{"type", "done"}}, &parsed, &nonce));
  // A host name that would forge a log line, a short nonce.
  Json hello = HelloMessage(Node(1), NewNonce());
  hello["host"] = "host2\n[2026-01-01 00:00:00.000] [host0] [INFO] all nodes joined";
  problem = ParseHello(hello, &parsed, &nonce);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->find('\n'), std::string::npos) << *problem;
  hello = HelloMessage(Node(1), "abc");
  EXPECT_TRUE(ParseHello(hello, &parsed, &nonce));
}

TEST(ControlProtocolTest, EachSideProvesTheTokenWithoutSendingIt) {
  const std::string token = "job-secret-0123456789";
  std::string member_nonce = NewNonce(), coordinator_nonce = NewNonce();
  Json hello = HelloMessage(Node(1), member_nonce);
  Json challenge = ChallengeMessage(token, member_nonce, coordinator_nonce);
  EXPECT_EQ(challenge.dump().find(token), std::string::npos);
  std::string got_nonce;
  EXPECT_FALSE(CheckChallenge(challenge, token, member_nonce, &got_nonce)) << "the real node 0 passes";
  EXPECT_EQ(got_nonce, coordinator_nonce);
  auto wrong = CheckChallenge(challenge, "another-token", member_nonce, &got_nonce);
  ASSERT_TRUE(wrong);
  EXPECT_NE(wrong->find("could not prove"), std::string::npos);
  // A proof made for another hello's nonce is no proof (no replay).
  EXPECT_TRUE(CheckChallenge(challenge, token, NewNonce(), &got_nonce));
  Json auth = AuthMessage(token, member_nonce, coordinator_nonce, hello);
  EXPECT_EQ(auth.dump().find(token), std::string::npos);
  EXPECT_TRUE(CheckAuth(auth, token, member_nonce, coordinator_nonce, hello));
  EXPECT_FALSE(CheckAuth(auth, "another-token", member_nonce, coordinator_nonce, hello));
  EXPECT_FALSE(CheckAuth(auth, token, member_nonce, NewNonce(), hello));
  // The auth is bound to the hello: changing the node rank on the way breaks it.
  Json altered = hello;
  altered["node_rank"] = 0;
  EXPECT_FALSE(CheckAuth(auth, token, member_nonce, coordinator_nonce, altered));
  // The coordinator's proof does not serve as a member's and back.
  Json reflected{{"type", "auth"}, {"proof", challenge["proof"]}};
  EXPECT_FALSE(CheckAuth(reflected, token, member_nonce, coordinator_nonce, hello));
}

TEST(ControlProtocolTest, StartMessagesAreValidatedFieldByField) {
  GenerationLayout layout{1, 2, "10.0.0.1", 29500, "own-run"};
  GenerationLayout good{1, 2, "10.0.0.2", 29501, "job-7", {"10.0.0.2", "node-b"}};
  EXPECT_FALSE(ReadStartMessage(StartMessage(3, good), 4, &layout));
  EXPECT_EQ(layout.master_addr, "10.0.0.2");
  EXPECT_EQ(layout.run_id, "job-7");
  EXPECT_EQ(layout.node_hosts, (std::vector<std::string>{"10.0.0.2", "node-b"}));
  GenerationLayout before = layout;
  for (const Json& bad : {Json{{"type", "start"}, {"generation", 1}, {"run_id", "../../../tmp/x"}},
                          Json{{"type", "start"}, {"generation", 1}, {"run_id", 7}},
                          Json{{"type", "start"}, {"generation", 1}, {"nnodes", 9}},
                          Json{{"type", "start"}, {"generation", 1}, {"nnodes", 2}, {"node_rank", 2}},
                          Json{{"type", "start"}, {"generation", 1}, {"master_addr", "a b"}},
                          Json{{"type", "start"}, {"generation", 1}, {"master_port", 0}},
                          Json{{"type", "start"}, {"generation", 1}, {"node_hosts", {"a"}}},  // not one per node
                          Json{{"type", "start"}, {"generation", 1}, {"node_hosts", {"a", "$(reboot)"}}},
                          Json{{"type", "start"}, {"generation", 1}, {"node_hosts", "a,b"}},
                          Json{{"type", "start"}, {"generation", "1"}}}) {
    EXPECT_TRUE(ReadStartMessage(bad, 4, &layout)) << bad.dump();
    EXPECT_EQ(layout.master_addr, before.master_addr);
    EXPECT_EQ(layout.run_id, before.run_id);
  }
}

TEST(ControlProtocolTest, ConsistentNodeFits) { EXPECT_FALSE(Inconsistency(Node(0), Node(1))); }

TEST(ControlProtocolTest, InconsistenciesNameBothNodes) {
  auto nproc = Inconsistency(Node(0, 2, 8), Node(1, 2, 4));
  ASSERT_TRUE(nproc);
  EXPECT_NE(nproc->find("nproc_per_node 4 on node 1 (host2) but 8 on node 0 (host1)"), std::string::npos) << *nproc;
  EXPECT_NE(nproc->find("world size 8 vs 16"), std::string::npos) << *nproc;

  auto version = Inconsistency(Node(0), Node(1, 2, 8, "0.2.0"));
  ASSERT_TRUE(version);
  EXPECT_NE(version->find("primus-cli 0.2.0 on node 1 (host2) but 0.1.0 on node 0"), std::string::npos);

  auto nnodes = Inconsistency(Node(0, 2), Node(1, 3));
  ASSERT_TRUE(nnodes);
  EXPECT_NE(nnodes->find("nnodes 3"), std::string::npos);

  auto rank = Inconsistency(Node(0, 2), Node(2, 2));
  ASSERT_TRUE(rank);
  EXPECT_NE(rank->find("outside 1..1"), std::string::npos);
  EXPECT_TRUE(Inconsistency(Node(0, 2), Node(0, 2)));  // a second node 0
}

TEST(ControlProtocolTest, FailureCrossesTheWireIntact) {
  WorkerFailure failure;
  failure.host = "host2";
  failure.rank = 11;
  failure.local_rank = 3;
  failure.pid = 4242;
  failure.attempt = 2;
  failure.exit_code = 137;
  failure.signal = 9;
  failure.hung = true;
  failure.timestamp = 1700000000.25;
  failure.detected_at = 1700000000.5;
  failure.log_file = "/logs/host2.rank11.log";
  failure.error_file = "/logs/host2.rank11.error.json";
  failure.message = "RuntimeError: \"quoted\"\nsecond line";
  failure.traceback = "Traceback ...";
  failure.log_tail = {"line 1", "line \xc3\xa9"};
  Json wire = Json::parse(FailureToJson(failure).dump());
  WorkerFailure back = FailureFromJson(wire);
  EXPECT_EQ(back.host, failure.host);
  EXPECT_EQ(back.rank, 11);
  EXPECT_EQ(back.local_rank, 3);
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.attempt, 2);
  EXPECT_EQ(back.exit_code, 137);
  EXPECT_EQ(back.signal, 9);
  EXPECT_TRUE(back.hung);
  EXPECT_DOUBLE_EQ(back.timestamp, failure.timestamp);
  EXPECT_DOUBLE_EQ(back.detected_at, failure.detected_at);
  EXPECT_EQ(back.log_file, failure.log_file);
  EXPECT_EQ(back.error_file, failure.error_file);
  EXPECT_EQ(back.message, failure.message);
  EXPECT_EQ(back.traceback, failure.traceback);
  EXPECT_EQ(back.log_tail, failure.log_tail);
}

TEST(ControlProtocolTest, DecisionAndOutcomeRoundTrip) {
  JobDecision decision;
  decision.restart = true;
  decision.exit_code = 7;
  decision.restarts = 2;
  decision.reason = "rank 3 failed";
  decision.root_cause = WorkerFailure{};
  decision.root_cause->rank = 3;
  Json wire = DecisionToJson(decision, 5);
  EXPECT_EQ(MessageType(wire), "decision");
  EXPECT_EQ(MessageGeneration(wire), 5);
  JobDecision back = DecisionFromJson(Json::parse(wire.dump()));
  EXPECT_TRUE(back.restart);
  EXPECT_EQ(back.exit_code, 7);
  EXPECT_EQ(back.restarts, 2);
  EXPECT_EQ(back.reason, "rank 3 failed");
  ASSERT_TRUE(back.root_cause);
  EXPECT_EQ(back.root_cause->rank, 3);

  NodeOutcome outcome;
  outcome.exit_code = 143;
  outcome.agent_signal = 15;
  outcome.stopped_by_job = true;
  outcome.other_failures.resize(2);
  NodeOutcome outcome_back = OutcomeFromJson(Json::parse(OutcomeToJson(outcome).dump()));
  EXPECT_EQ(outcome_back.exit_code, 143);
  EXPECT_EQ(outcome_back.agent_signal, 15);
  EXPECT_TRUE(outcome_back.stopped_by_job);
  EXPECT_FALSE(outcome_back.root_cause);
  EXPECT_EQ(outcome_back.other_failures.size(), 2u);
}

// A hang's places cross the wire whole; a peer's odd ones are bounded and escaped.
TEST(ControlProtocolTest, HangPlacesTravelInTheOutcome) {
  NodeOutcome outcome;
  analyze::RankPlace place;
  place.rank = 5;
  place.host = "node1";
  place.frame = "train.py:20 in wait_for_peer";
  place.readable = true;
  place.local_rank = 1;
  place.gpu = "GPU 1 (0000:1b:00.0)";
  place.last_step = 41;
  place.has_flight_record = true;
  analyze::GroupProgress group;
  group.group = "0 (default_pg)";
  group.last_enqueued = 41;
  group.last_completed = 41;
  place.groups.push_back(group);
  outcome.hang_places.push_back(place);
  NodeOutcome back = OutcomeFromJson(Json::parse(OutcomeToJson(outcome).dump()));
  ASSERT_EQ(back.hang_places.size(), 1u);
  EXPECT_EQ(back.hang_places[0].frame, "train.py:20 in wait_for_peer");
  EXPECT_EQ(back.hang_places[0].last_step, 41);
  EXPECT_EQ(back.hang_places[0].gpu, "GPU 1 (0000:1b:00.0)");
  ASSERT_EQ(back.hang_places[0].groups.size(), 1u);
  EXPECT_EQ(back.hang_places[0].groups[0].last_enqueued, 41);

  Json odd = Json::parse(R"({"hang_places": [7, {"rank": -1}, {"rank": 2, "host": "a\u001b[31mb", "groups": "x",
                              "last_step": "many"}]})");
  odd["hang_places"][2]["frame"] = std::string(10000, 'f');
  NodeOutcome read = OutcomeFromJson(odd);
  ASSERT_EQ(read.hang_places.size(), 1u);
  EXPECT_EQ(read.hang_places[0].rank, 2);
  EXPECT_EQ(read.hang_places[0].host.find('\x1b'), std::string::npos);
  EXPECT_LE(read.hang_places[0].frame.size(), 512u);
  EXPECT_FALSE(read.hang_places[0].last_step);
}

TEST(ControlProtocolTest, MessagesWithoutTypeOrGenerationAreRecognised) {
  EXPECT_EQ(MessageType(Json::array()), "");
  EXPECT_EQ(MessageType(Json{{"type", 3}}), "");
  EXPECT_EQ(MessageGeneration(Json{{"type", "stop"}}), -1);
  EXPECT_EQ(MessageGeneration(Json{{"generation", "1"}}), -1);
}

}  // namespace
}  // namespace primus::job
