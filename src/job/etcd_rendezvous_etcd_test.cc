// The etcd rendezvous against a real etcd 3.4 (Debian's etcd-server, as
// scripts/setup.sh installs it), started by the test on loopback ports of its
// own with a temporary data directory and stopped by pid at the end.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_test_util.h"
#include "io/message_socket.h"
#include "job/etcd_rendezvous.h"
#include "io/http_client.h"
#include "job/open_link.h"
#include "util/files.h"

namespace primus::job {
namespace {

using agent::testing::Contains;
using agent::testing::FreePort;
using agent::testing::Stopwatch;
using agent::testing::WaitFor;

constexpr char kEtcd[] = "/usr/bin/etcd";

// One etcd member on 127.0.0.1, stopped (SIGTERM, then SIGKILL) when this
// goes out of scope; it also dies with the test process (PR_SET_PDEATHSIG).
class EtcdServer {
 public:
  // nullptr with *error set when it did not come up (its log's tail included).
  static std::unique_ptr<EtcdServer> Start(bool enable_v2, std::string* error) {
    // A free port can be taken by someone else before etcd binds it: try again.
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto server = std::unique_ptr<EtcdServer>(new EtcdServer());
      if (server->Launch(enable_v2, error)) return server;
    }
    return nullptr;
  }
  ~EtcdServer() { Stop(); }

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(client_port_); }

  // An outage: SIGKILL, as a crash or a lost host would be.
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // Back on the same ports with the same data.
  bool Restart(std::string* error) { return Launch(enable_v2_, error, /*same_ports=*/true); }

  // The value of `key` ("" when absent), read with the v2 API.
  std::string Value(const std::string& key) const {
    auto response = io::SendHttpRequest({"127.0.0.1", client_port_}, {"GET", "/v2/keys" + key, ""}, 2);
    if (!response.ok() || response->status != 200) return "";
    auto json = nlohmann::json::parse(response->body, nullptr, false);
    return json.is_object() && json["node"].is_object() && json["node"]["value"].is_string()
               ? json["node"]["value"].get<std::string>()
               : "";
  }

 private:
  EtcdServer() = default;

  bool Launch(bool enable_v2, std::string* error, bool same_ports = false) {
    enable_v2_ = enable_v2;
    if (!same_ports) {
      client_port_ = FreePort();
      peer_port_ = FreePort();
    }
    int peer_port = peer_port_;
    std::string client = "http://127.0.0.1:" + std::to_string(client_port_);
    std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
    std::vector<std::string> args = {kEtcd, "--name", "t", "--data-dir", dir_.path() + "/data",
                                     "--listen-client-urls", client, "--advertise-client-urls", client,
                                     "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                                     "--initial-cluster", "t=" + peer, "--heartbeat-interval=10",
                                     "--election-timeout=50"};
    if (enable_v2) args.push_back("--enable-v2=true");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::string log = dir_.path() + "/etcd.log";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(kEtcd, argv.data());
      ::_exit(127);
    }
    // Ready when it answers /version; etcd takes well under a second.
    bool ready = WaitFor(
        [&] {
          if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return pid_ = -1, true;
          auto response = io::SendHttpRequest({"127.0.0.1", client_port_}, {"GET", "/version", ""}, 1);
          return response.ok() && response->status == 200;
        },
        15);
    if (ready && pid_ > 0) return true;
    auto text = ReadFile(log);
    *error = "etcd did not start; its log ends:\n" + (text.ok() ? text->substr(text->size() - std::min<size_t>(text->size(), 2000)) : "");
    Stop();
    return false;
  }

  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    if (!WaitFor([&] { return ::waitpid(pid_, nullptr, WNOHANG) == pid_; }, 5)) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }

  ScopedTempDir dir_{"etcd"};
  int client_port_ = 0;
  int peer_port_ = 0;
  bool enable_v2_ = true;
  pid_t pid_ = -1;
};

class EtcdRendezvousRealTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::access(kEtcd, X_OK) != 0) return;
    server_ = EtcdServer::Start(true, &start_error_).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    if (::access(kEtcd, X_OK) != 0) GTEST_SKIP() << kEtcd << " is missing: scripts/setup.sh installs etcd-server";
    ASSERT_NE(server_, nullptr) << start_error_;
  }
  static EtcdSettings Etcd(double ttl_s = 10) { return {server_->endpoint(), "/primus/rdzv", ttl_s}; }

  static inline EtcdServer* server_ = nullptr;
  static inline std::string start_error_;
};

// Three agents at once: one coordinator, and all agree where it listens.
std::vector<RendezvousPoint> ElectTogether(const EtcdSettings& etcd, const std::string& run_id, int agents) {
  std::vector<Result<RendezvousPoint>> results(agents, Error{});
  std::latch start(agents);
  std::vector<std::thread> threads;
  for (int i = 0; i < agents; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = ElectCoordinator(etcd, run_id, "127.0.0.1", 31000 + i, 10);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<RendezvousPoint> points;
  for (auto& result : results) {
    EXPECT_TRUE(result.ok()) << result.error().message;
    if (result.ok()) points.push_back(*result);
  }
  return points;
}

void ExpectOneCoordinator(const std::vector<RendezvousPoint>& points, size_t agents) {
  ASSERT_EQ(points.size(), agents);
  int coordinators = 0, coordinator_port = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].coordinator) {
      ++coordinators;
      coordinator_port = 31000 + static_cast<int>(i);
    }
  }
  ASSERT_EQ(coordinators, 1);
  for (const RendezvousPoint& point : points) {
    EXPECT_EQ(point.host, "127.0.0.1");
    EXPECT_EQ(point.port, coordinator_port);
    EXPECT_EQ(point.value, points[0].value);
  }
}

TEST_F(EtcdRendezvousRealTest, ConcurrentAgentsAgreeOnOneCoordinatorPerRunId) {
  auto first = ElectTogether(Etcd(), "job-a", 3);
  ExpectOneCoordinator(first, 3);
  // Another run id is another election.
  auto second = ElectTogether(Etcd(), "job-b", 3);
  ExpectOneCoordinator(second, 3);
  EXPECT_NE(first[0].value, second[0].value);
  EXPECT_TRUE(ReleaseCoordinator(Etcd(), "job-a", first[0], 5).ok());
  EXPECT_TRUE(ReleaseCoordinator(Etcd(), "job-b", second[0], 5).ok());
}

TEST_F(EtcdRendezvousRealTest, ReleasedKeyLetsTheNextJobElectAtOnceButNeverRemovesANewerOne) {
  auto old = ElectCoordinator(Etcd(), "job-r", "10.0.0.1", 29400, 5);
  ASSERT_TRUE(old.ok()) << old.error().message;
  ASSERT_TRUE(old->coordinator);
  ASSERT_TRUE(ReleaseCoordinator(Etcd(), "job-r", *old, 5).ok());
  auto next = ElectCoordinator(Etcd(), "job-r", "10.0.0.2", 29400, 5);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_TRUE(next->coordinator);
  // The old coordinator releasing late leaves the new key in place.
  ASSERT_TRUE(ReleaseCoordinator(Etcd(), "job-r", *old, 5).ok());
  auto member = ElectCoordinator(Etcd(), "job-r", "10.0.0.3", 29400, 5);
  ASSERT_TRUE(member.ok()) << member.error().message;
  EXPECT_FALSE(member->coordinator);
  EXPECT_EQ(member->host, "10.0.0.2");
  EXPECT_TRUE(ReleaseCoordinator(Etcd(), "job-r", *next, 5).ok());
}

TEST_F(EtcdRendezvousRealTest, AKeyNobodyRefreshesExpiresWithinItsTtl) {
  EtcdSettings etcd = Etcd(2);
  // Crashed: nothing listens on its port any more (the fence then lets a new one take over).
  auto crashed = ElectCoordinator(etcd, "job-ttl", "127.0.0.1", FreePort(), 5);
  ASSERT_TRUE(crashed.ok()) << crashed.error().message;
  ASSERT_TRUE(crashed->coordinator);
  Stopwatch watch;
  bool took_over = WaitFor(
      [&] {
        auto point = ElectCoordinator(etcd, "job-ttl", "10.0.0.2", 29400, 5);
        EXPECT_TRUE(point.ok()) << point.error().message;
        return point.ok() && point->coordinator;
      },
      6);
  ASSERT_TRUE(took_over);
  EXPECT_GE(watch.Seconds(), 1.0);  // not before the TTL ran out
  EXPECT_LT(watch.Seconds(), 4.5);
  // The crashed coordinator cannot refresh a key that is no longer its own.
  auto late = RefreshCoordinator(etcd, "job-ttl", *crashed, 5);
  ASSERT_FALSE(late.ok());
  EXPECT_TRUE(Contains(late.error().message, "now names another agent")) << late.error().message;
}

TEST_F(EtcdRendezvousRealTest, ARefreshedKeyOutlivesItsTtl) {
  EtcdSettings etcd = Etcd(2);
  auto live = ElectCoordinator(etcd, "job-live", "10.0.0.1", 29400, 5);
  ASSERT_TRUE(live.ok()) << live.error().message;
  Stopwatch watch;
  while (watch.Seconds() < 2.8) {  // longer than the TTL
    auto refreshed = RefreshCoordinator(etcd, "job-live", *live, 5);
    ASSERT_TRUE(refreshed.ok()) << refreshed.error().message;
    EXPECT_EQ(*refreshed, Refreshed::kRefreshed);
    std::this_thread::sleep_for(std::chrono::duration<double>(etcd.RefreshInterval()));
  }
  auto member = ElectCoordinator(etcd, "job-live", "10.0.0.2", 29400, 5);
  ASSERT_TRUE(member.ok()) << member.error().message;
  EXPECT_FALSE(member->coordinator);
  EXPECT_EQ(member->value, live->value);
  EXPECT_TRUE(ReleaseCoordinator(etcd, "job-live", *live, 5).ok());
}

// A coordinator that crashed leaves a port nobody listens on: the member that
// is refused there withdraws the key and elects again, without the TTL.
TEST_F(EtcdRendezvousRealTest, AMemberRefusedByTheCoordinatorTakesOverAtOnce) {
  int dead_port = FreePort();
  auto crashed = ElectCoordinator(Etcd(60), "job-dead", "127.0.0.1", dead_port, 5);
  ASSERT_TRUE(crashed.ok()) << crashed.error().message;
  Stopwatch watch;
  auto point = ElectCoordinator(Etcd(60), "job-dead", "127.0.0.1", 31500, 5);
  ASSERT_TRUE(point.ok()) << point.error().message;
  ASSERT_FALSE(point->coordinator);
  ASSERT_EQ(point->port, dead_port);
  auto connection = io::ConnectToNode(point->host, point->port, 2);
  ASSERT_FALSE(connection.ok());
  ASSERT_TRUE(ReleaseCoordinator(Etcd(60), "job-dead", *point, 5).ok());
  auto again = ElectCoordinator(Etcd(60), "job-dead", "127.0.0.1", 31500, 5);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->coordinator);
  EXPECT_LT(watch.Seconds(), 2);
  EXPECT_TRUE(ReleaseCoordinator(Etcd(60), "job-dead", *again, 5).ok());
}

// etcd away for longer than the coordinator key's TTL (issue 27): the key
// expires while the job runs. Whoever comes first when etcd is back, the
// running coordinator stays the only one.
class EtcdOutageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kEtcd, X_OK) != 0) GTEST_SKIP() << kEtcd << " is missing: scripts/setup.sh installs etcd-server";
    std::string error;
    server_ = EtcdServer::Start(true, &error);
    ASSERT_NE(server_, nullptr) << error;
    auto listener = io::ListenForNodes(0);
    ASSERT_TRUE(listener.ok());
    control_port_ = io::BoundPort(listener->get());
    control_ = std::move(*listener);  // the running coordinator's control port: it accepts
    auto elected = ElectCoordinator(Etcd(), "job-out", "127.0.0.1", control_port_, 5);
    ASSERT_TRUE(elected.ok()) << elected.error().message;
    ASSERT_TRUE(elected->coordinator);
    coordinator_ = *elected;
  }
  EtcdSettings Etcd() const { return {server_->endpoint(), "/primus/rdzv", 1}; }
  // etcd gone for three TTLs, then back; the coordinator's key has expired.
  void Outage() {
    server_->Kill();
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::string error;
    ASSERT_TRUE(server_->Restart(&error)) << error;
    ASSERT_TRUE(WaitFor([&] { return server_->Value(kKey).empty(); }, 10)) << "the key outlived its TTL";
  }
  static constexpr char kKey[] = "/primus/rdzv/job-out/coordinator";

  std::unique_ptr<EtcdServer> server_;
  io::UniqueFd control_;
  int control_port_ = 0;
  RendezvousPoint coordinator_;
};

TEST_F(EtcdOutageTest, TheCoordinatorReclaimsItsExpiredKeyAndALateAgentJoinsIt) {
  Outage();
  auto refreshed = RefreshCoordinator(Etcd(), "job-out", coordinator_, 5);
  ASSERT_TRUE(refreshed.ok()) << refreshed.error().message;
  EXPECT_EQ(*refreshed, Refreshed::kReclaimed);
  EXPECT_EQ(server_->Value(kKey), coordinator_.value);
  auto late = ElectCoordinator(Etcd(), "job-out", "127.0.0.1", FreePort(), 5);
  ASSERT_TRUE(late.ok()) << late.error().message;
  EXPECT_FALSE(late->coordinator) << "a second coordinator of one job";
  EXPECT_EQ(late->port, control_port_);
}

TEST_F(EtcdOutageTest, ALateAgentThatWinsTheExpiredKeyFindsTheRunningCoordinatorByTheFence) {
  Outage();
  // The late agent asks first: it wins the key, but the fence names a
  // coordinator that still accepts connections.
  auto late = ElectCoordinator(Etcd(), "job-out", "127.0.0.1", FreePort(), 5);
  ASSERT_TRUE(late.ok()) << late.error().message;
  EXPECT_FALSE(late->coordinator) << "a second coordinator of one job";
  EXPECT_TRUE(late->fenced);
  EXPECT_EQ(late->port, control_port_);
  EXPECT_EQ(server_->Value(kKey), "") << "the late agent withdrew its claim";
  // The running coordinator's next refresh claims its key again.
  auto refreshed = RefreshCoordinator(Etcd(), "job-out", coordinator_, 5);
  ASSERT_TRUE(refreshed.ok()) << refreshed.error().message;
  EXPECT_EQ(server_->Value(kKey), coordinator_.value);
}

TEST_F(EtcdOutageTest, AFenceNamingACoordinatorThatIsGoneIsReplaced) {
  control_.Reset();  // the coordinator died with etcd: its port refuses
  Outage();
  auto next = ElectCoordinator(Etcd(), "job-out", "127.0.0.1", 31700, 5);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_TRUE(next->coordinator);
  EXPECT_FALSE(next->fenced);
  EXPECT_EQ(server_->Value("/primus/rdzv/job-out/fence"), next->value);
  EXPECT_TRUE(ReleaseCoordinator(Etcd(), "job-out", *next, 5).ok());
  EXPECT_EQ(server_->Value("/primus/rdzv/job-out/fence"), "") << "released with the key";
}

// Something listens where the fence points, but it is no coordinator of this
// job (a squatter, another job's agent): it cannot prove itself, so the
// fence does not keep a new coordinator out.
TEST_F(EtcdOutageTest, AFenceNamingAPortWhereSomethingElseListensIsReplaced) {
  Outage();
  auto next = ElectCoordinator(Etcd(), "job-out", "127.0.0.1", 31701, 5, [](const std::string& host, int port) {
    return CoordinatorProvesItself(host, port, "the-job-token", 1);
  });
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_TRUE(next->coordinator) << "a listener that cannot prove itself kept the job without a coordinator";
  EXPECT_EQ(server_->Value("/primus/rdzv/job-out/fence"), next->value);
  EXPECT_TRUE(ReleaseCoordinator(Etcd(), "job-out", *next, 5).ok());
}

TEST(EtcdRendezvousDownTest, NoEtcdIsUnavailableWithinTheTimeout) {
  std::string endpoint = "127.0.0.1:" + std::to_string(FreePort());
  Stopwatch watch;
  auto point = ElectCoordinator({endpoint}, "job", "127.0.0.1", 29400, 1.5);
  ASSERT_FALSE(point.ok());
  EXPECT_GE(watch.Seconds(), 1.4);
  EXPECT_LT(watch.Seconds(), 4);
  EXPECT_EQ(static_cast<int>(point.error().code), 4);
  EXPECT_TRUE(Contains(point.error().message, "cannot reach the etcd server at " + endpoint)) << point.error().message;
}

TEST(EtcdRendezvousV2OffTest, EtcdWithoutTheV2ApiSaysToEnableIt) {
  if (::access(kEtcd, X_OK) != 0) GTEST_SKIP() << kEtcd << " is missing: scripts/setup.sh installs etcd-server";
  std::string error;
  auto server = EtcdServer::Start(false, &error);
  ASSERT_NE(server, nullptr) << error;
  Stopwatch watch;
  auto point = ElectCoordinator({server->endpoint()}, "job", "127.0.0.1", 29400, 10);
  ASSERT_FALSE(point.ok());
  EXPECT_LT(watch.Seconds(), 2);
  EXPECT_EQ(static_cast<int>(point.error().code), 4);
  EXPECT_TRUE(Contains(point.error().message, server->endpoint() + " does not serve the v2 keys API"))
      << point.error().message;
  EXPECT_TRUE(Contains(point.error().hint, "start etcd with --enable-v2=true")) << point.error().hint;
}

}  // namespace
}  // namespace primus::job
