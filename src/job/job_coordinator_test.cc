// Node 0's decisions, driven without root and without other agents: the test
// plays the other nodes by hand over loopback (a FakeNode speaks the control
// protocol message by message) and moves the clock by handing OnDeadline a
// time in the future. Covers: admission (token, consistency), a failure
// report stopping everyone, a silent node lost after the heartbeat timeout,
// the restart decision and its limit, a stuck exit (exit 6, no restart), an
// agent signal (no restart), and strangers on the control port (garbage,
// floods) held to a bounded number of connections. Elastic jobs (c10d):
// the start after the minimum and the last call, ranks handed out and
// renumbered after a loss, a scale-up when a node joins, standbys at the
// maximum, and the end below the minimum.
#include "job/job_coordinator.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "io/message_socket.h"

#include "agent/agent_test_util.h"
#include "util/error.h"

namespace primus::job {

using agent::JobDecision;
using agent::LaunchHandles;
using agent::NodeOutcome;
using agent::Seconds;
using agent::SteadyClock;
using agent::SteadyTime;
using agent::WorkerFailure;

namespace {

using agent::testing::FreePort;

// One of the other nodes, played by the test. After its hello a thread of
// its own answers node 0's challenge, as a real member does (node 0's Join()
// blocks the test's thread meanwhile); everything else is read by the test.
class FakeNode {
 public:
  FakeNode(int port, int node_rank) : node_rank_(node_rank) {
    auto fd = io::ConnectToNode("127.0.0.1", port, 2);
    EXPECT_TRUE(fd.ok()) << fd.error().message;
    if (fd.ok()) connection_ = std::make_unique<io::MessageConnection>(std::move(*fd), "node 0");
  }
  ~FakeNode() {
    if (handshake_.joinable()) handshake_.join();
  }
  void Hello(const std::string& token, int nnodes = 2, int nproc = 1, const std::string& version = "test") {
    NodeIdentity self{node_rank_, nnodes, nproc, version, "fakehost" + std::to_string(node_rank_), 4242};
    SendHello(self, token);
  }
  // A c10d node: no rank of its own, the job's MIN:MAX.
  void HelloElastic(const std::string& token, int min_nnodes, int max_nnodes, const std::string& host) {
    NodeIdentity self{-1, max_nnodes, 1, "test", host, 4242, min_nnodes, "c10d"};
    SendHello(self, token);
  }
  void Send(const Json& message) {
    FinishHandshake();
    ASSERT_TRUE(connection_->Send(message));
  }
  // Every message that arrived so far (waits up to `timeout_ms` for the first).
  // Nothing while the challenge has not come (node 0 has not read the hello).
  std::vector<Json> Read(int timeout_ms = 0) {
    if (handshake_.joinable() && !handshake_done_) {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
      while (!handshake_done_ && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (!handshake_done_) return {};
    }
    FinishHandshake();
    std::vector<Json> got = std::move(early_);
    early_.clear();
    pollfd waiter{connection_->fd(), POLLIN, 0};
    if (::poll(&waiter, 1, got.empty() ? timeout_ms : 0) == 1) {
      closed_ |= connection_->Receive(&got) == io::MessageConnection::ReadResult::kClosed;
    }
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
  void SendHello(const NodeIdentity& self, const std::string& token) {
    std::string nonce = NewNonce();
    Json hello = HelloMessage(self, nonce);
    ASSERT_TRUE(connection_->Send(hello));
    handshake_ = std::thread([this, token, nonce, hello] {
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (std::chrono::steady_clock::now() < until) {
        pollfd waiter{connection_->fd(), POLLIN, 0};
        if (::poll(&waiter, 1, 20) != 1) continue;
        std::vector<Json> got;
        bool closed = connection_->Receive(&got) == io::MessageConnection::ReadResult::kClosed;
        bool answered = false;
        for (const Json& message : got) {
          if (MessageType(message) == "challenge") {
            std::string coordinator_nonce;
            (void)CheckChallenge(message, token, nonce, &coordinator_nonce);
            connection_->Send(AuthMessage(token, nonce, coordinator_nonce, hello));
            answered = true;
          }
          early_.push_back(message);
        }
        if (closed) closed_ = true;
        if (answered || closed) break;
      }
      handshake_done_ = true;
    });
  }
  // The test reads only once the challenge is answered.
  void FinishHandshake() {
    if (handshake_.joinable()) handshake_.join();
  }

  int node_rank_;
  std::unique_ptr<io::MessageConnection> connection_;
  std::thread handshake_;
  std::atomic<bool> handshake_done_{false};
  std::vector<Json> early_;  // read by the handshake thread
  std::vector<Json> inbox_;
  bool closed_ = false;
};

WorkerFailure Failure(const std::string& host, int rank, int exit_code) {
  WorkerFailure failure;
  failure.host = host;
  failure.rank = rank;
  failure.exit_code = exit_code;
  failure.timestamp = failure.detected_at = 1000;
  return failure;
}

class JobCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto handles = LaunchHandles::Start("PRIMUS_TEST_COORDINATOR=1");
    ASSERT_TRUE(handles.ok()) << handles.error().Format();
    handles_ = std::move(*handles);
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
    auto coordinator = JobCoordinator::Open(settings_, *handles_);
    ASSERT_TRUE(coordinator.ok()) << coordinator.error().Format();
    coordinator_ = std::move(*coordinator);
  }
  // Pumps node 0's events for `seconds` (or until `done`).
  template <typename Done>
  void Pump(double seconds, Done done) {
    SteadyTime until = SteadyClock::now() + Seconds(seconds);
    while (!done() && SteadyClock::now() < until) PumpLinkEvents(*handles_, *coordinator_, until);
  }
  void Pump(double seconds) {
    Pump(seconds, [] { return false; });
  }
  // Node 1's rank 1 fails with 7 in `generation`; node 0's decision.
  JobDecision FailOnNodeOne(FakeNode& node, int generation) {
    NodeOutcome failed;
    failed.exit_code = 7;
    failed.root_cause = Failure("fakehost1", 1, 7);
    NodeOutcome stopped;
    stopped.exit_code = 143;
    stopped.stopped_by_job = true;
    node.Send(Json{{"type", "failure"}, {"generation", generation}, {"failure", FailureToJson(*failed.root_cause)}});
    node.Send(Json{{"type", "done"}, {"generation", generation}, {"outcome", OutcomeToJson(failed)}});
    Pump(2, [&] { return coordinator_->stop_reason().has_value(); });
    return coordinator_->EndGeneration(stopped);
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
  std::unique_ptr<LaunchHandles> handles_;
  std::unique_ptr<JobCoordinator> coordinator_;
};


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
  EXPECT_EQ(joined.error().code, ExitCode::kUnavailable);
  EXPECT_NE(joined.error().message.find("node 1 did not join"), std::string::npos) << joined.error().message;
  node.Read(500);
  const Json* refused = node.Last("refuse");
  ASSERT_NE(refused, nullptr);
  EXPECT_NE(refused->value("reason", "").find("wrong job token"), std::string::npos);
}

// A member whose node 0 answers late may have sent a heartbeat (an older
// agent did) before its auth: the heartbeat is not taken for the auth.
TEST_F(JobCoordinatorTest, AHeartbeatBeforeTheAuthIsNotTakenForIt) {
  Open();
  auto fd = io::ConnectToNode("127.0.0.1", settings_.control_port, 2);
  ASSERT_TRUE(fd.ok());
  io::MessageConnection connection(std::move(*fd), "node 0");
  std::string nonce = NewNonce();
  Json hello = HelloMessage(NodeIdentity{1, 2, 1, "test", "fakehost1", 4242}, nonce);
  ASSERT_TRUE(connection.Send(hello));
  ASSERT_TRUE(connection.Send(Json{{"type", "heartbeat"}}));
  std::thread member([&] {
    std::vector<Json> got;
    for (int i = 0; i < 200 && got.empty(); ++i) {
      pollfd waiter{connection.fd(), POLLIN, 0};
      if (::poll(&waiter, 1, 20) == 1) connection.Receive(&got);
    }
    ASSERT_FALSE(got.empty());
    std::string coordinator_nonce;
    EXPECT_FALSE(CheckChallenge(got.front(), settings_.token, nonce, &coordinator_nonce));
    connection.Send(AuthMessage(settings_.token, nonce, coordinator_nonce, hello));
  });
  auto joined = coordinator_->Join();
  member.join();
  EXPECT_TRUE(joined.ok()) << joined.error().Format();
}

// etcd's fence check: node 0 proves itself to a probe holding the token, and
// to no one else; the probe never joins.
TEST_F(JobCoordinatorTest, ACoordinatorProvesItselfToAProbeWithTheToken) {
  Open();
  bool proven = false, proven_wrong = true;
  std::atomic<bool> done{false};
  std::thread probe([&] {
    proven = CoordinatorProvesItself("127.0.0.1", settings_.control_port, settings_.token);
    proven_wrong = CoordinatorProvesItself("127.0.0.1", settings_.control_port, "another-token");
    done = true;
  });
  Pump(15, [&] { return done.load(); });
  probe.join();
  EXPECT_TRUE(proven);
  EXPECT_FALSE(proven_wrong);
  EXPECT_TRUE(coordinator_->stop_reason() == std::nullopt);
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

// direct.exclude_bad_nodes: a node whose worker fails in two generations in
// a row is left out; with a spare at the launcher, the job ends for it to
// start the job there (the decision names the host; its agent exits 5).
TEST_F(JobCoordinatorTest, ANodeFailingAgainIsExcludedWhenTheLauncherHasASpare) {
  settings_.max_restarts = 3;
  settings_.exclude_bad_nodes = true;
  settings_.spare_nodes = 1;
  auto node = StartedJob();
  JobDecision first = FailOnNodeOne(*node, 0);
  EXPECT_TRUE(first.restart) << "one failure is not enough to leave a node out";
  EXPECT_TRUE(first.excluded_hosts.empty());
  JobDecision second = FailOnNodeOne(*node, 1);
  EXPECT_FALSE(second.restart) << "the launcher starts the job again on its spare";
  EXPECT_EQ(second.excluded_hosts, std::vector<std::string>{"fakehost1"});
  EXPECT_NE(second.exclusion_reason.find("it failed again"), std::string::npos) << second.exclusion_reason;
  node->Read(500);
  const Json* told = node->Last("decision");
  ASSERT_NE(told, nullptr);
  EXPECT_EQ(DecisionFromJson(*told).excluded_hosts, std::vector<std::string>{"fakehost1"});
}

TEST_F(JobCoordinatorTest, WithoutASpareABadNodeStaysAndTheJobRestartsInPlace) {
  settings_.max_restarts = 3;
  settings_.exclude_bad_nodes = true;  // no spare_nodes
  auto node = StartedJob();
  for (int generation = 0; generation < 2; ++generation) {
    JobDecision decision = FailOnNodeOne(*node, generation);
    EXPECT_TRUE(decision.restart);
    EXPECT_TRUE(decision.excluded_hosts.empty());
  }
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
  auto fd = io::ConnectToNode("127.0.0.1", settings_.control_port, 2);
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

// Elastic jobs: the coordinator hands ranks out (c10d).
class ElasticCoordinatorTest : public JobCoordinatorTest {
 protected:
  void SetUp() override {
    JobCoordinatorTest::SetUp();
    settings_.self = NodeIdentity{0, 3, 1, "test", "host0", 1, 2, "c10d"};  // 2 to 3 nodes
    settings_.last_call_timeout_s = 0.3;
  }
  std::unique_ptr<FakeNode> Joining(const std::string& host) {
    auto node = std::make_unique<FakeNode>(settings_.control_port, -1);
    node->HelloElastic(settings_.token, settings_.self.Minimum(), settings_.self.nnodes, host);
    return node;
  }
  static NodeOutcome Stopped() {
    NodeOutcome stopped;
    stopped.exit_code = 143;
    stopped.stopped_by_job = true;
    return stopped;
  }
  static int RankIn(const Json* start) { return start == nullptr ? -2 : start->value("node_rank", -2); }
};

TEST_F(ElasticCoordinatorTest, StartsWithTheMinimumOnceTheLastCallPassed) {
  settings_.run_id = "job-7";
  Open();
  auto a = Joining("hostA");
  SteadyTime begin = SteadyClock::now();
  auto joined = coordinator_->Join();
  ASSERT_TRUE(joined.ok()) << joined.error().Format();
  double waited = std::chrono::duration<double>(SteadyClock::now() - begin).count();
  EXPECT_GE(waited, 0.25) << "the last call is waited for below the maximum";
  a->Read(1000);
  const Json* start = a->Last("start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(RankIn(start), 1);
  EXPECT_EQ(start->value("nnodes", 0), 2);
  EXPECT_GT(start->value("master_port", 0), 0) << "the coordinator picks the workers' master port";
  EXPECT_EQ(start->value("run_id", ""), "job-7") << "one TORCHELASTIC_RUN_ID for the whole job";
  EXPECT_EQ(coordinator_->layout().nnodes, 2);
  EXPECT_EQ(coordinator_->layout().node_rank, 0);
}

TEST_F(ElasticCoordinatorTest, StartsAtOnceWhenTheMaximumJoined) {
  settings_.last_call_timeout_s = 30;
  Open();
  auto a = Joining("hostA");
  auto b = Joining("hostB");
  SteadyTime begin = SteadyClock::now();
  ASSERT_TRUE(coordinator_->Join().ok());
  EXPECT_LT(std::chrono::duration<double>(SteadyClock::now() - begin).count(), 5);
  a->Read(1000);
  b->Read(1000);
  std::set<int> ranks = {RankIn(a->Last("start")), RankIn(b->Last("start"))};
  EXPECT_EQ(ranks, (std::set<int>{1, 2}));
  EXPECT_EQ(a->Last("start")->value("nnodes", 0), 3);
}

TEST_F(ElasticCoordinatorTest, BelowTheMinimumWithinTheJoinTimeoutNothingStarts) {
  settings_.join_timeout_s = 0.3;
  Open();
  auto joined = coordinator_->Join();
  ASSERT_FALSE(joined.ok());
  EXPECT_EQ(joined.error().code, ExitCode::kUnavailable);
  EXPECT_NE(joined.error().message.find("only 1 of at least 2 nodes joined"), std::string::npos)
      << joined.error().message;
}

TEST_F(ElasticCoordinatorTest, ALostNodeRestartsTheSurvivorsRenumberedWithoutUsingARestart) {
  settings_.last_call_timeout_s = 30;
  Open();
  auto a = Joining("hostA");
  a->Read(500);  // A joins first: node 1
  Pump(0.2);
  auto b = Joining("hostB");
  ASSERT_TRUE(coordinator_->Join().ok());
  b->Read(1000);
  ASSERT_EQ(RankIn(b->Last("start")), 2);
  a.reset();  // node 1's agent dies: its connection closes
  Pump(2, [&] { return coordinator_->stop_reason().has_value(); });
  ASSERT_TRUE(coordinator_->stop_reason().has_value());
  EXPECT_NE(coordinator_->stop_reason()->find("lost node 1 (hostA)"), std::string::npos) << *coordinator_->stop_reason();
  b->Send(Json{{"type", "done"}, {"generation", 0}, {"outcome", OutcomeToJson(Stopped())}});
  JobDecision decision = coordinator_->EndGeneration(Stopped());
  EXPECT_TRUE(decision.restart);
  EXPECT_TRUE(decision.membership_changed);
  EXPECT_EQ(decision.next_nnodes, 2);
  EXPECT_EQ(decision.restarts, 0) << "a membership change is not one of --max-restarts";
  EXPECT_NE(decision.reason.find("lost node 1 (hostA)"), std::string::npos) << decision.reason;
  EXPECT_EQ(coordinator_->generation(), 1);
  EXPECT_EQ(coordinator_->layout().nnodes, 2);
  b->Read(1000);
  const Json* start = b->Last("start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->value("generation", -1), 1);
  EXPECT_EQ(RankIn(start), 1) << "hostB is renumbered from node 2 to node 1";
  EXPECT_EQ(start->value("nnodes", 0), 2);
}

TEST_F(ElasticCoordinatorTest, BelowTheMinimumAfterALossTheJobEnds) {
  settings_.self.min_nnodes = 3;  // 3:3 with c10d
  Open();
  auto a = Joining("hostA");
  auto b = Joining("hostB");
  ASSERT_TRUE(coordinator_->Join().ok());
  b->Read(1000);
  a.reset();
  Pump(2, [&] { return coordinator_->stop_reason().has_value(); });
  b->Send(Json{{"type", "done"}, {"generation", 0}, {"outcome", OutcomeToJson(Stopped())}});
  JobDecision decision = coordinator_->EndGeneration(Stopped());
  EXPECT_FALSE(decision.restart);
  EXPECT_EQ(decision.exit_code, 1);
  EXPECT_NE(decision.reason.find("only 2 nodes left, fewer than the minimum of 3"), std::string::npos) << decision.reason;
  b->Read(1000);
  ASSERT_NE(b->Last("decision"), nullptr);
  EXPECT_FALSE(b->Last("decision")->value("restart", true));
}

TEST_F(ElasticCoordinatorTest, ANodeJoiningTheRunningJobScalesItUp) {
  Open();
  auto a = Joining("hostA");
  ASSERT_TRUE(coordinator_->Join().ok());  // 2 nodes, after the last call
  a->Read(1000);
  ASSERT_EQ(a->Last("start")->value("nnodes", 0), 2);
  auto c = Joining("hostC");
  Pump(2, [&] { return coordinator_->stop_reason().has_value(); });
  ASSERT_TRUE(coordinator_->stop_reason().has_value());
  EXPECT_NE(coordinator_->stop_reason()->find("joined: scaling up to 3 nodes"), std::string::npos)
      << *coordinator_->stop_reason();
  a->Read(500);
  ASSERT_NE(a->Last("stop"), nullptr);
  // Workers that leave on SIGTERM with 0 were stopped, not finished.
  NodeOutcome left_cleanly = Stopped();
  left_cleanly.exit_code = 0;
  a->Send(Json{{"type", "done"}, {"generation", 0}, {"outcome", OutcomeToJson(left_cleanly)}});
  JobDecision decision = coordinator_->EndGeneration(left_cleanly);
  EXPECT_TRUE(decision.restart);
  EXPECT_TRUE(decision.membership_changed);
  EXPECT_EQ(decision.next_nnodes, 3);
  c->Read(1000);
  const Json* start = c->Last("start");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->value("generation", -1), 1);
  EXPECT_EQ(RankIn(start), 2);
  EXPECT_EQ(start->value("nnodes", 0), 3);
}

TEST_F(ElasticCoordinatorTest, AtTheMaximumANewNodeWaitsAsAStandbyAndReplacesALostOne) {
  settings_.self = NodeIdentity{0, 2, 1, "test", "host0", 1, 1, "c10d"};  // 1 to 2 nodes
  Open();
  auto a = Joining("hostA");
  ASSERT_TRUE(coordinator_->Join().ok());
  a->Read(1000);
  ASSERT_EQ(a->Last("start")->value("nnodes", 0), 2);
  auto spare = Joining("hostS");
  Pump(0.5);
  spare->Read(500);
  ASSERT_NE(spare->Last("welcome"), nullptr);
  EXPECT_TRUE(spare->Last("welcome")->value("standby", false));
  EXPECT_FALSE(coordinator_->stop_reason().has_value()) << "a standby does not restart a full job";
  a.reset();
  Pump(2, [&] { return coordinator_->stop_reason().has_value(); });
  JobDecision decision = coordinator_->EndGeneration(Stopped());
  EXPECT_TRUE(decision.restart);
  EXPECT_EQ(decision.next_nnodes, 2) << "the standby takes the lost node's place";
  spare->Read(1000);
  ASSERT_NE(spare->Last("start"), nullptr);
  EXPECT_EQ(RankIn(spare->Last("start")), 1);
}

TEST_F(ElasticCoordinatorTest, ANodeWithItsOwnRankIsRefusedAndTheJobGoesOn) {
  settings_.last_call_timeout_s = 0.2;
  Open();
  FakeNode stray(settings_.control_port, 1);
  stray.Hello(settings_.token, 3);  // static-style hello: rank 1 of 3
  auto a = Joining("hostA");
  ASSERT_TRUE(coordinator_->Join().ok());
  stray.Read(500);
  ASSERT_NE(stray.Last("refuse"), nullptr);
  EXPECT_NE(stray.Last("refuse")->value("reason", "").find("node ranks are handed out"), std::string::npos);
  a->Read(1000);
  EXPECT_NE(a->Last("start"), nullptr);
}

}  // namespace
}  // namespace primus::job
