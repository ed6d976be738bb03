// Node 0's decisions, driven without root and without other agents: the test
// plays the other nodes by hand over loopback (a FakeNode speaks the control
// protocol message by message) and moves the clock by handing OnDeadline a
// time in the future. Covers: admission (token, consistency), a failure
// report stopping everyone, a silent node lost after the heartbeat timeout,
// the restart decision and its limit, a stuck exit (exit 6, no restart), an
// agent signal (no restart), and strangers on the control port (garbage,
// floods) held to a bounded number of connections.
#include "agent/job_coordinator.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <memory>

#include "agent/control_socket.h"

#include "agent/agent_test_util.h"
#include "util/error.h"

namespace primus::agent {
namespace {

using testing::FreePort;

// One of the other nodes, played by the test.
class FakeNode {
 public:
  FakeNode(int port, int node_rank) : node_rank_(node_rank) {
    auto fd = ConnectToNode("127.0.0.1", port, 2);
    EXPECT_TRUE(fd.ok()) << fd.error().message;
    if (fd.ok()) connection_ = std::make_unique<MessageConnection>(std::move(*fd), "node 0");
  }
  void Hello(const std::string& token, int nnodes = 2, int nproc = 1, const std::string& version = "test") {
    NodeIdentity self{node_rank_, nnodes, nproc, version, "fakehost" + std::to_string(node_rank_), 4242};
    Send(HelloMessage(self, token));
  }
  void Send(const Json& message) { ASSERT_TRUE(connection_->Send(message)); }
  // Every message that arrived so far (waits up to `timeout_ms` for the first).
  std::vector<Json> Read(int timeout_ms = 0) {
    std::vector<Json> got;
    pollfd waiter{connection_->fd(), POLLIN, 0};
    if (::poll(&waiter, 1, timeout_ms) == 1) closed_ |= connection_->Receive(&got) == MessageConnection::ReadResult::kClosed;
    for (const Json& message : got) inbox_.push_back(message);
    return got;
  }
  // The last message of `type` received so far, or null.
  const Json* Last(const std::string& type) {
    Read();
    for (auto it = inbox_.rbegin(); it != inbox_.rend(); ++it) {
      if (MessageType(*it) == type) return &*it;
    }
    return nullptr;
  }
  bool closed() {
    Read();
    return closed_;
  }

 private:
  int node_rank_;
  std::unique_ptr<MessageConnection> connection_;
  std::vector<Json> inbox_;
  bool closed_ = false;
};

class JobCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto runtime = AgentRuntime::Start("PRIMUS_TEST_COORDINATOR=1");
    ASSERT_TRUE(runtime.ok()) << runtime.error().Format();
    runtime_ = std::move(*runtime);
    settings_.self = NodeIdentity{0, 2, 1, "test", "host0", 1};
    settings_.token = "secret-token";
    settings_.master_addr = "127.0.0.1";
    settings_.control_port = FreePort();
    settings_.join_timeout_s = 3;
    settings_.exit_barrier_timeout_s = 2;
    settings_.term_timeout_s = 0.5;
    settings_.restart_backoff_s = 0.01;
    settings_.max_restart_backoff_s = 0.01;
  }
  void Open() {
    auto coordinator = JobCoordinator::Open(settings_, *runtime_);
    ASSERT_TRUE(coordinator.ok()) << coordinator.error().Format();
    coordinator_ = std::move(*coordinator);
  }
  // Pumps node 0's events for `seconds` (or until `done`).
  template <typename Done>
  void Pump(double seconds, Done done) {
    SteadyTime until = SteadyClock::now() + Seconds(seconds);
    while (!done() && SteadyClock::now() < until) PumpLinkEvents(*runtime_, *coordinator_, until);
  }
  void Pump(double seconds) {
    Pump(seconds, [] { return false; });
  }
  // Node 0 with one fake node 1 joined and generation 0 started.
  std::unique_ptr<FakeNode> StartedJob() {
    Open();
    auto node = std::make_unique<FakeNode>(settings_.control_port, 1);
    node->Hello(settings_.token);
    auto joined = coordinator_->Join();
    EXPECT_TRUE(joined.ok()) << joined.error().Format();
    EXPECT_NE(node->Read(1000).size(), 0u);
    EXPECT_NE(node->Last("start"), nullptr);
    return node;
  }

  JobLinkSettings settings_;
  std::unique_ptr<AgentRuntime> runtime_;
  std::unique_ptr<JobCoordinator> coordinator_;
};

WorkerFailure Failure(const std::string& host, int rank, int exit_code) {
  WorkerFailure failure;
  failure.host = host;
  failure.rank = rank;
  failure.exit_code = exit_code;
  failure.timestamp = failure.detected_at = 1000;
  return failure;
}

TEST_F(JobCoordinatorTest, ANodeWithTheTokenJoinsAndEveryoneIsStarted) {
  auto node = StartedJob();
  EXPECT_EQ(node->Last("start")->value("generation", -1), 0);
  EXPECT_NE(node->Last("welcome"), nullptr);
}

TEST_F(JobCoordinatorTest, AWrongTokenIsRefusedAndTheJobDoesNotStart) {
  settings_.join_timeout_s = 0.5;
  Open();
  FakeNode node(settings_.control_port, 1);
  node.Hello("not-the-token");
  auto joined = coordinator_->Join();
  ASSERT_FALSE(joined.ok());
  EXPECT_EQ(joined.error().code, ExitCode::kEnvironment);
  EXPECT_NE(joined.error().message.find("node 1 did not join"), std::string::npos) << joined.error().message;
  node.Read(500);
  const Json* refused = node.Last("refuse");
  ASSERT_NE(refused, nullptr);
  EXPECT_NE(refused->value("reason", "").find("wrong job token"), std::string::npos);
}

TEST_F(JobCoordinatorTest, AnInconsistentNodeIsRefusedNamingBoth) {
  Open();
  FakeNode node(settings_.control_port, 1);
  node.Hello(settings_.token, 2, /*nproc=*/4);
  auto joined = coordinator_->Join();
  ASSERT_FALSE(joined.ok());
  EXPECT_NE(joined.error().message.find("nproc_per_node 4 on node 1"), std::string::npos) << joined.error().message;
}

TEST_F(JobCoordinatorTest, AFailureReportStopsEveryNodeAndTheRestartIsDecidedForAll) {
  settings_.max_restarts = 1;
  auto node = StartedJob();
  node->Send(Json{{"type", "failure"}, {"generation", 0}, {"failure", FailureToJson(Failure("fakehost1", 1, 7))}});
  Pump(2, [&] { return coordinator_->stop_reason().has_value(); });
  ASSERT_TRUE(coordinator_->stop_reason().has_value());
  EXPECT_NE(coordinator_->stop_reason()->find("rank 1 on node 1"), std::string::npos) << *coordinator_->stop_reason();
  node->Read(500);
  ASSERT_NE(node->Last("stop"), nullptr) << "node 1 is told to stop";

  NodeOutcome failed;
  failed.exit_code = 7;
  failed.root_cause = Failure("fakehost1", 1, 7);
  node->Send(Json{{"type", "done"}, {"generation", 0}, {"outcome", OutcomeToJson(failed)}});
  NodeOutcome stopped;
  stopped.exit_code = 143;
  stopped.stopped_by_job = true;
  JobDecision decision = coordinator_->EndGeneration(stopped);
  EXPECT_TRUE(decision.restart);
  EXPECT_EQ(decision.restarts, 1);
  ASSERT_TRUE(decision.root_cause.has_value());
  EXPECT_EQ(decision.root_cause->rank, 1);
  EXPECT_EQ(coordinator_->generation(), 1);
  node->Read(500);
  const Json* told = node->Last("decision");
  ASSERT_NE(told, nullptr);
  EXPECT_TRUE(told->value("restart", false));
  EXPECT_EQ(node->Last("start")->value("generation", -1), 1) << "generation 1 starts on every node";

  // The same failure again: no restart left, the job ends with its code.
  node->Send(Json{{"type", "failure"}, {"generation", 1}, {"failure", FailureToJson(Failure("fakehost1", 1, 7))}});
  node->Send(Json{{"type", "done"}, {"generation", 1}, {"outcome", OutcomeToJson(failed)}});
  Pump(1, [&] { return coordinator_->stop_reason().has_value(); });
  JobDecision last = coordinator_->EndGeneration(stopped);
  EXPECT_FALSE(last.restart);
  EXPECT_EQ(last.exit_code, 7);
}

TEST_F(JobCoordinatorTest, ASilentNodeIsLostAfterTheHeartbeatTimeoutAndTheJobEnds) {
  settings_.heartbeat_timeout_s = 10;
  settings_.max_restarts = 3;
  auto node = StartedJob();
  EXPECT_FALSE(coordinator_->stop_reason().has_value());
  coordinator_->OnDeadline(SteadyClock::now() + Seconds(5));
  EXPECT_FALSE(coordinator_->stop_reason().has_value()) << "5 s of silence is within the timeout";
  coordinator_->OnDeadline(SteadyClock::now() + Seconds(11));
  ASSERT_TRUE(coordinator_->stop_reason().has_value());
  EXPECT_NE(coordinator_->stop_reason()->find("lost node 1"), std::string::npos);
  EXPECT_NE(coordinator_->stop_reason()->find("no heartbeat for 10 s"), std::string::npos);
  NodeOutcome stopped;
  stopped.exit_code = 143;
  stopped.stopped_by_job = true;
  JobDecision decision = coordinator_->EndGeneration(stopped);
  EXPECT_FALSE(decision.restart) << "a lost node is not restarted around";
  EXPECT_EQ(decision.exit_code, 1);
  EXPECT_NE(decision.reason.find("lost node 1"), std::string::npos) << decision.reason;
}

TEST_F(JobCoordinatorTest, AStuckExitEndsWithExitCode6AndNoRestart) {
  settings_.max_restarts = 3;
  auto node = StartedJob();
  NodeOutcome stuck;
  stuck.exit_code = static_cast<int>(ExitCode::kStuckAtExit);
  stuck.stuck_at_exit = {1};
  node->Send(Json{{"type", "done"}, {"generation", 0}, {"outcome", OutcomeToJson(stuck)}});
  JobDecision decision = coordinator_->EndGeneration(NodeOutcome{});
  EXPECT_FALSE(decision.restart);
  EXPECT_EQ(decision.exit_code, 6);
  EXPECT_NE(decision.reason.find("rank 1 on node 1"), std::string::npos) << decision.reason;
}

TEST_F(JobCoordinatorTest, AnAgentSignalEndsTheJobWithoutRestart) {
  settings_.max_restarts = 3;
  auto node = StartedJob();
  node->Send(Json{{"type", "failure"}, {"generation", 0}, {"signal", 15}});
  Pump(2, [&] { return coordinator_->stop_reason().has_value(); });
  ASSERT_TRUE(coordinator_->stop_reason().has_value());
  NodeOutcome signalled;
  signalled.exit_code = 143;
  signalled.agent_signal = 15;
  node->Send(Json{{"type", "done"}, {"generation", 0}, {"outcome", OutcomeToJson(signalled)}});
  NodeOutcome own;
  own.exit_code = 143;
  own.stopped_by_job = true;
  JobDecision decision = coordinator_->EndGeneration(own);
  EXPECT_FALSE(decision.restart);
  EXPECT_EQ(decision.exit_code, 143);
}

TEST_F(JobCoordinatorTest, AMessageOfTheWrongShapeDoesNotEndNode0) {
  auto node = StartedJob();
  // Every field of the wrong type: read as defaults, never thrown.
  node->Send(Json{{"type", "failure"}, {"generation", 0}, {"failure", Json{{"rank", "one"}, {"exit_code", 1e300},
                                                                          {"host", 5}, {"log_tail", "x"}}}});
  node->Send(Json{{"type", "done"}, {"generation", 0}, {"outcome", Json::array({1, 2})}, {"fatal", "yes"}});
  Pump(1, [&] { return coordinator_->stop_reason().has_value(); });
  EXPECT_TRUE(coordinator_->stop_reason().has_value()) << "the failure still stops the job";
}

TEST_F(JobCoordinatorTest, StrangersAreHeldToABoundedNumberOfConnections) {
  Open();
  // 100 connections that never say hello, and a few that send garbage.
  std::vector<std::unique_ptr<FakeNode>> strangers;
  for (int i = 0; i < 100; ++i) strangers.push_back(std::make_unique<FakeNode>(settings_.control_port, 1));
  FakeNode garbage(settings_.control_port, 1);
  garbage.Send(Json{{"not", "a hello"}});
  Pump(1);
  size_t open = 0;
  for (auto& stranger : strangers) open += stranger->closed() ? 0 : 1;
  EXPECT_LE(open, 64u) << "connections that have not introduced themselves are bounded";
  EXPECT_TRUE(garbage.closed());
  // A real node still gets in.
  FakeNode node(settings_.control_port, 1);
  node.Hello(settings_.token);
  auto joined = coordinator_->Join();
  EXPECT_TRUE(joined.ok()) << joined.error().Format();
}

TEST_F(JobCoordinatorTest, AStrangerStreamingWithoutNewlinesIsCutOffAtTheHelloLimit) {
  Open();
  auto fd = ConnectToNode("127.0.0.1", settings_.control_port, 2);
  ASSERT_TRUE(fd.ok());
  std::string junk(64 << 10, 'x');
  size_t sent = 0;
  bool cut_off = false;
  for (int i = 0; i < 200 && !cut_off; ++i) {
    ssize_t wrote = ::send(fd->get(), junk.data(), junk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (wrote > 0) sent += static_cast<size_t>(wrote);
    if (wrote < 0 && errno != EAGAIN) cut_off = true;
    Pump(0.01);
  }
  EXPECT_TRUE(cut_off) << "node 0 kept reading " << sent << " bytes without a newline";
}

}  // namespace
}  // namespace primus::agent
