// A member node's side of the job link, driven without root and without
// other agents: a FakeCoordinator thread plays node 0 over loopback, message
// by message, and the clock is moved by handing OnDeadline a future time.
// Covers: joining (hello with the token and identity, start), a refusal with
// its hint, node 0's stop order, node 0 going silent (lost after the
// heartbeat timeout), a restart decision and the next generation, node 0's
// final decision (exit 6 for a stuck exit), and node 0 vanishing before it
// decides.
#include "job/job_member.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <functional>
#include <memory>
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

// Node 0, played by a thread: accepts the member, then runs `script` with the
// connection (read what the member sent, answer).
class FakeCoordinator {
 public:
  using Script = std::function<void(FakeCoordinator&)>;
  FakeCoordinator(int port, Script script) {
    auto listener = io::ListenForNodes(port);
    EXPECT_TRUE(listener.ok());
    listener_ = std::move(*listener);
    thread_ = std::thread([this, script] {
      pollfd waiter{listener_.get(), POLLIN, 0};
      if (::poll(&waiter, 1, 5000) != 1) return;
      std::string peer;
      io::UniqueFd fd = io::AcceptNode(listener_.get(), &peer);
      connection_ = std::make_unique<io::MessageConnection>(std::move(fd), peer);
      script(*this);
    });
  }
  ~FakeCoordinator() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  // The next message of `type` from the member (waits up to 5 s), or null json.
  Json Expect(const std::string& type) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
      for (size_t i = 0; i < inbox_.size(); ++i) {
        if (MessageType(inbox_[i]) == type) {
          Json found = inbox_[i];
          inbox_.erase(inbox_.begin() + static_cast<long>(i));
          return found;
        }
      }
      pollfd waiter{connection_->fd(), POLLIN, 0};
      if (::poll(&waiter, 1, 100) == 1) {
        if (connection_->Receive(&inbox_) == io::MessageConnection::ReadResult::kClosed) break;
      }
    }
    return Json();
  }
  void Send(const Json& message) { connection_->Send(message); }
  void Close() { connection_.reset(); }
  // The challenge a real node 0 answers a hello with, under `token`; then
  // the member's auth. Returns the auth (null json when none came).
  Json Challenge(const Json& hello, const std::string& token) {
    std::string own = NewNonce();
    Send(ChallengeMessage(token, hello.value("nonce", ""), own));
    Json auth = Expect("auth");
    last_auth_ok_ = CheckAuth(auth, token, hello.value("nonce", ""), own, hello);
    return auth;
  }
  bool last_auth_ok() const { return last_auth_ok_; }

 private:
  io::UniqueFd listener_;
  std::unique_ptr<io::MessageConnection> connection_;
  std::vector<Json> inbox_;
  std::thread thread_;
  bool last_auth_ok_ = false;
};

class JobMemberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto handles = LaunchHandles::Start("PRIMUS_TEST_MEMBER=1");
    ASSERT_TRUE(handles.ok()) << handles.error().Format();
    handles_ = std::move(*handles);
    settings_.self = NodeIdentity{1, 2, 1, "test", "host1", 1};
    settings_.token = "secret-token";
    settings_.master_addr = "127.0.0.1";
    settings_.control_port = FreePort();
    settings_.join_timeout_s = 5;
    settings_.max_restarts = 2;
  }
  // Pumps the member's events for up to `seconds`, or until `done`.
  void Pump(JobMember& member, double seconds, const std::function<bool()>& done) {
    SteadyTime until = SteadyClock::now() + Seconds(seconds);
    while (!done() && SteadyClock::now() < until) PumpLinkEvents(*handles_, member, until);
  }
  // Node 0's side of a normal join: challenge, welcome, start generation 0.
  static void Welcome(FakeCoordinator& node0, Json* hello) {
    *hello = node0.Expect("hello");
    node0.Challenge(*hello, "secret-token");
    node0.Send(Json{{"type", "welcome"}});
    node0.Send(Json{{"type", "start"}, {"generation", 0}});
  }

  JobLinkSettings settings_;
  std::unique_ptr<LaunchHandles> handles_;
};

TEST_F(JobMemberTest, JoinsWithItsTokenAndIdentityAndStartsWhenTold) {
  Json hello;
  FakeCoordinator node0(settings_.control_port, [&](FakeCoordinator& c) { Welcome(c, &hello); });
  JobMember member(settings_, *handles_);
  auto joined = member.Join();
  ASSERT_TRUE(joined.ok()) << joined.error().Format();
  EXPECT_EQ(*joined, 0);
  node0.Join();
  EXPECT_TRUE(node0.last_auth_ok()) << "the member proved it holds the token";
  EXPECT_FALSE(hello.contains("token")) << "the token never crosses the wire";
  EXPECT_EQ(hello.dump().find("secret-token"), std::string::npos);
  EXPECT_EQ(hello.value("node_rank", -1), 1);
  EXPECT_EQ(hello.value("nnodes", -1), 2);
  EXPECT_EQ(member.generation(), 0);
  EXPECT_FALSE(member.stop_reason().has_value());
}

TEST_F(JobMemberTest, ARefusalIsUnavailableWithAHint) {
  FakeCoordinator node0(settings_.control_port, [](FakeCoordinator& c) {
    Json hello = c.Expect("hello");
    c.Challenge(hello, "secret-token");
    c.Send(Json{{"type", "refuse"}, {"reason", "wrong job token: PRIMUS_JOB_TOKEN differs from node 0's"}});
  });
  JobMember member(settings_, *handles_);
  auto joined = member.Join();
  ASSERT_FALSE(joined.ok());
  EXPECT_EQ(joined.error().code, ExitCode::kUnavailable);
  EXPECT_NE(joined.error().message.find("refused this node: wrong job token"), std::string::npos);
  EXPECT_NE(joined.error().hint.find("PRIMUS_JOB_TOKEN"), std::string::npos) << joined.error().hint;
}

// Whoever binds the control port first is not node 0 unless it proves it:
// it learns nothing of the token, and nothing it sends is taken.
TEST_F(JobMemberTest, AProgramSquattingTheControlPortCannotProveItselfAndIsRefused) {
  settings_.join_timeout_s = 3;
  std::string seen;
  FakeCoordinator squatter(settings_.control_port, [&](FakeCoordinator& c) {
    Json hello = c.Expect("hello");
    seen = hello.dump();
    // Orders before any challenge, then a challenge it cannot prove.
    c.Send(Json{{"type", "refuse"}, {"reason", "forged"}});
    c.Send(Json{{"type", "start"}, {"generation", 0}, {"run_id", "../../../tmp/x"}, {"master_addr", "10.6.6.6"}});
    c.Send(Json{{"type", "decision"}, {"generation", 0}, {"restart", false}, {"exit_code", 0}});
    Json auth = c.Challenge(hello, "a-guessed-token");
    seen += auth.dump();
    c.Expect("never");
  });
  JobMember member(settings_, *handles_);
  auto joined = member.Join();
  ASSERT_FALSE(joined.ok()) << "the member must not start for a coordinator that cannot prove itself";
  EXPECT_EQ(joined.error().code, ExitCode::kUnavailable);
  EXPECT_NE(joined.error().message.find("is not this job's node 0"), std::string::npos) << joined.error().message;
  EXPECT_NE(joined.error().message.find("could not prove"), std::string::npos) << joined.error().message;
  EXPECT_EQ(member.layout().master_addr, "127.0.0.1") << "nothing of the forged start was taken";
  EXPECT_NE(member.layout().run_id, "../../../tmp/x");
  squatter.Join();
  EXPECT_EQ(seen.find("secret-token"), std::string::npos) << "the token never reached the squatter: " << seen;
}

TEST_F(JobMemberTest, AStartMessageThatDoesNotFitIsRefusedEvenFromNode0) {
  for (const Json& bad : {Json{{"type", "start"}, {"generation", 0}, {"run_id", "../../../tmp/x"}},
                          Json{{"type", "start"}, {"generation", 0}, {"master_addr", "host\n[ERROR] forged"}},
                          Json{{"type", "start"}, {"generation", 0}, {"node_rank", 5}},
                          Json{{"type", "start"}, {"generation", 0}, {"master_port", 70000}}}) {
    settings_.control_port = FreePort();
    FakeCoordinator node0(settings_.control_port, [&](FakeCoordinator& c) {
      Json hello = c.Expect("hello");
      c.Challenge(hello, "secret-token");
      c.Send(Json{{"type", "welcome"}});
      c.Send(bad);
      c.Expect("never");
    });
    JobMember member(settings_, *handles_);
    auto joined = member.Join();
    ASSERT_FALSE(joined.ok()) << bad.dump();
    EXPECT_NE(joined.error().message.find("does not fit this job"), std::string::npos) << joined.error().message;
    EXPECT_EQ(joined.error().message.find('\n'), std::string::npos) << "a peer's text stays on one line";
  }
}

TEST_F(JobMemberTest, Node0sStopOrderIsTheStopReason) {
  FakeCoordinator node0(settings_.control_port, [](FakeCoordinator& c) {
    Json hello;
    Welcome(c, &hello);
    c.Send(Json{{"type", "stop"}, {"generation", 0}, {"reason", "rank 0 on node 0 (host0) failed with exit code 7"}});
    c.Expect("never");  // keep the connection open a while
  });
  JobMember member(settings_, *handles_);
  ASSERT_TRUE(member.Join().ok());
  Pump(member, 3, [&] { return member.stop_reason().has_value(); });
  ASSERT_TRUE(member.stop_reason().has_value());
  EXPECT_EQ(*member.stop_reason(), "rank 0 on node 0 (host0) failed with exit code 7");
}

TEST_F(JobMemberTest, ASilentNode0IsLostAfterTheHeartbeatTimeout) {
  settings_.heartbeat_timeout_s = 10;
  FakeCoordinator node0(settings_.control_port, [](FakeCoordinator& c) {
    Json hello;
    Welcome(c, &hello);
  });
  JobMember member(settings_, *handles_);
  ASSERT_TRUE(member.Join().ok());
  member.OnDeadline(SteadyClock::now() + Seconds(5));
  EXPECT_FALSE(member.stop_reason().has_value()) << "5 s of silence is within the timeout";
  member.OnDeadline(SteadyClock::now() + Seconds(11));
  ASSERT_TRUE(member.stop_reason().has_value());
  EXPECT_NE(member.stop_reason()->find("lost node 0 at 127.0.0.1"), std::string::npos) << *member.stop_reason();
  EXPECT_NE(member.stop_reason()->find("no heartbeat for 10 s"), std::string::npos) << *member.stop_reason();
}

TEST_F(JobMemberTest, ARestartDecisionStartsTheNextGenerationTogether) {
  Json done;
  FakeCoordinator node0(settings_.control_port, [&](FakeCoordinator& c) {
    Json hello;
    Welcome(c, &hello);
    done = c.Expect("done");
    JobDecision restart;
    restart.restart = true;
    restart.restarts = 1;
    restart.reason = "rank 1 failed";
    c.Send(DecisionToJson(restart, 0));
    c.Send(Json{{"type", "start"}, {"generation", 1}});
  });
  JobMember member(settings_, *handles_);
  ASSERT_TRUE(member.Join().ok());
  NodeOutcome outcome;
  outcome.exit_code = 7;
  WorkerFailure failure;
  failure.rank = 1;
  failure.exit_code = 7;
  outcome.root_cause = failure;
  JobDecision decision = member.EndGeneration(outcome);
  node0.Join();
  EXPECT_TRUE(decision.restart);
  EXPECT_EQ(decision.restarts, 1);
  EXPECT_EQ(member.generation(), 1);
  EXPECT_EQ(done.value("generation", -1), 0);
  EXPECT_EQ(OutcomeFromJson(done["outcome"]).exit_code, 7) << "the member reported its outcome";
}

TEST_F(JobMemberTest, Node0sFinalDecisionIsTheMembersToo) {
  FakeCoordinator node0(settings_.control_port, [](FakeCoordinator& c) {
    Json hello;
    Welcome(c, &hello);
    c.Expect("done");
    JobDecision end;
    end.exit_code = static_cast<int>(ExitCode::kStuckAtExit);
    end.reason = "the work finished, but rank 0 on node 0 (host0) stayed in teardown";
    c.Send(DecisionToJson(end, 0));
  });
  JobMember member(settings_, *handles_);
  ASSERT_TRUE(member.Join().ok());
  JobDecision decision = member.EndGeneration(NodeOutcome{});
  EXPECT_FALSE(decision.restart);
  EXPECT_EQ(decision.exit_code, 6);
}

TEST_F(JobMemberTest, Node0VanishingBeforeItDecidesEndsTheMemberWithItsOwnFailure) {
  FakeCoordinator node0(settings_.control_port, [](FakeCoordinator& c) {
    Json hello;
    Welcome(c, &hello);
    c.Expect("done");
    c.Close();
  });
  JobMember member(settings_, *handles_);
  ASSERT_TRUE(member.Join().ok());
  NodeOutcome outcome;
  outcome.exit_code = 143;
  JobDecision decision = member.EndGeneration(outcome);
  EXPECT_FALSE(decision.restart);
  EXPECT_EQ(decision.exit_code, 143);
  EXPECT_NE(decision.reason.find("lost node 0"), std::string::npos) << decision.reason;
}

}  // namespace
}  // namespace primus::job
