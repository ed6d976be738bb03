#include "job/etcd_rendezvous.h"

#include <gtest/gtest.h>

#include <string>

#include "agent/agent_test_util.h"
#include "http_test_server.h"

namespace primus::job {
namespace {

// The fake etcd answers each request with a canned response.
using primus::testing::CannedReply;
using primus::testing::HttpTestServer;
using primus::testing::Respond;
using agent::testing::Contains;

TEST(EtcdRendezvousTest, RunIdsAreNamesNotPaths) {
  for (const char* id : {"job-1", "slurm_12345.0", "A", "x.y.z"}) EXPECT_TRUE(ValidateRunId(id).ok()) << id;
  for (const std::string& id : std::vector<std::string>{"", ".", "..", "a/b", "../x", "a?prevExist=true", "a&b", "a b", "a%2F", "a\nb",
                               std::string(129, 'a')}) {
    Status status = ValidateRunId(id);
    ASSERT_FALSE(status.ok()) << id;
    EXPECT_EQ(status.error().code, ExitCode::kConfig);
    EXPECT_TRUE(status.error().message.starts_with("rendezvous id \"")) << status.error().message;
    EXPECT_FALSE(Contains(status.error().message, "\n"));
  }
}

TEST(EtcdRendezvousTest, RefusesBadSettingsBeforeTalkingToEtcd) {
  HttpTestServer server([](const std::string&) { return Respond(201, "{}"); });
  EtcdSettings etcd{server.endpoint()};
  EXPECT_EQ(ElectCoordinator(etcd, "a/../b", "node0", 29400, 1).error().code, ExitCode::kConfig);
  EXPECT_EQ(ElectCoordinator(etcd, "job", "", 29400, 1).error().code, ExitCode::kConfig);
  EXPECT_EQ(ElectCoordinator(etcd, "job", "node0", 0, 1).error().code, ExitCode::kConfig);
  for (const char* prefix : {"primus", "/a//b", "/a/../b", "/a?x=1"}) {
    EtcdSettings bad{server.endpoint(), prefix};
    auto point = ElectCoordinator(bad, "job", "node0", 29400, 1);
    ASSERT_FALSE(point.ok()) << prefix;
    EXPECT_TRUE(Contains(point.error().message, "etcd key prefix")) << point.error().message;
  }
  EXPECT_EQ(ElectCoordinator({"https://etcd:2379"}, "job", "node0", 29400, 1).error().code, ExitCode::kConfig);
  EXPECT_TRUE(server.requests().empty());
}

// A fake etcd with no fence yet: the key is created, the fence read (absent) and written.
CannedReply NoFenceYet(const std::string& request) {
  if (request.starts_with("GET") && Contains(request, "/fence ")) {
    return Respond(404, R"({"errorCode":100,"message":"Key not found"})");
  }
  if (request.starts_with("PUT") && Contains(request, "/fence ")) return Respond(200, R"({"action":"set"})");
  return Respond(201, R"({"action":"create"})");
}

TEST(EtcdRendezvousTest, TheFirstToCreateTheKeyCoordinates) {
  HttpTestServer server(NoFenceYet);
  auto point = ElectCoordinator({server.endpoint(), "/jobs/"}, "job-7", "10.0.0.1", 29400, 5);
  ASSERT_TRUE(point.ok()) << point.error().message;
  EXPECT_TRUE(point->coordinator);
  EXPECT_EQ(point->host, "10.0.0.1");
  EXPECT_EQ(point->port, 29400);
  EXPECT_TRUE(point->value.starts_with("10.0.0.1:29400:")) << point->value;
  EXPECT_EQ(point->value.size(), std::string("10.0.0.1:29400:").size() + 16);
  ASSERT_EQ(server.requests().size(), 3u);
  std::string request = server.requests()[0];
  EXPECT_TRUE(request.starts_with("PUT /v2/keys/jobs/job-7/coordinator?prevExist=false HTTP/1.1\r\n")) << request;
  EXPECT_TRUE(Contains(request, "\r\n\r\nvalue=10.0.0.1%3A29400%3A")) << request;
  EXPECT_TRUE(request.ends_with("&ttl=10")) << request;
  // Then the fence: read, and written with the same value, no TTL.
  EXPECT_TRUE(server.requests()[1].starts_with("GET /v2/keys/jobs/job-7/fence HTTP/1.1\r\n")) << server.requests()[1];
  EXPECT_TRUE(server.requests()[2].starts_with("PUT /v2/keys/jobs/job-7/fence HTTP/1.1\r\n")) << server.requests()[2];
  EXPECT_TRUE(Contains(server.requests()[2], "\r\n\r\nvalue=10.0.0.1%3A29400%3A")) << server.requests()[2];
  EXPECT_FALSE(Contains(server.requests()[2], "ttl=")) << server.requests()[2];
}

TEST(EtcdRendezvousTest, TheOthersReadTheCoordinatorsAddress) {
  HttpTestServer server([](const std::string& request) {
    if (request.starts_with("PUT")) {
      return Respond(412, R"({"errorCode":105,"message":"Key already exists","index":4})");
    }
    return Respond(200, R"({"action":"get","node":{"key":"/primus/rdzv/j/coordinator","value":"fd00::7:29400:0123"}})");
  });
  auto point = ElectCoordinator({server.endpoint()}, "j", "node1", 29400, 5);
  ASSERT_TRUE(point.ok()) << point.error().message;
  EXPECT_FALSE(point->coordinator);
  EXPECT_EQ(point->host, "fd00::7");
  EXPECT_EQ(point->port, 29400);
  EXPECT_EQ(point->value, "fd00::7:29400:0123");
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_TRUE(server.requests()[1].starts_with("GET /v2/keys/primus/rdzv/j/coordinator HTTP/1.1\r\n"));
}

TEST(EtcdRendezvousTest, AKeyHoldingSomethingElseIsAnError) {
  HttpTestServer server([](const std::string& request) {
    if (request.starts_with("PUT")) return Respond(412, R"({"errorCode":105})");
    return Respond(200, R"({"node":{"value":"hello"}})");
  });
  auto point = ElectCoordinator({server.endpoint()}, "j", "node1", 29400, 5);
  ASSERT_FALSE(point.ok());
  EXPECT_EQ(point.error().code, ExitCode::kUnavailable);
  EXPECT_TRUE(Contains(point.error().message, "does not hold a coordinator's host:port:nonce")) << point.error().message;
}

TEST(EtcdRendezvousTest, AServerWithoutTheV2ApiSaysHowToStartEtcd) {
  HttpTestServer server([](const std::string&) { return Respond(404, "404 page not found\n", "text/plain"); });
  agent::testing::Stopwatch watch;
  auto point = ElectCoordinator({server.endpoint()}, "j", "node1", 29400, 10);
  ASSERT_FALSE(point.ok());
  EXPECT_LT(watch.Seconds(), 2);  // no retries: waiting would not help
  EXPECT_EQ(point.error().code, ExitCode::kUnavailable);
  EXPECT_TRUE(Contains(point.error().message, server.endpoint() + " does not serve the v2 keys API"))
      << point.error().message;
  EXPECT_TRUE(Contains(point.error().hint, "start etcd with --enable-v2=true")) << point.error().hint;
}

TEST(EtcdRendezvousTest, AnUnreachableServerIsUnavailableAtTheDeadline) {
  int port = agent::testing::FreePort();
  agent::testing::Stopwatch watch;
  auto point = ElectCoordinator({"127.0.0.1:" + std::to_string(port)}, "j", "node1", 29400, 0.5);
  ASSERT_FALSE(point.ok());
  EXPECT_GE(watch.Seconds(), 0.45);
  EXPECT_LT(watch.Seconds(), 3);
  EXPECT_EQ(point.error().code, ExitCode::kUnavailable);
  EXPECT_TRUE(Contains(point.error().message, "cannot reach the etcd server at 127.0.0.1:" + std::to_string(port)))
      << point.error().message;
  EXPECT_TRUE(Contains(point.error().message, "(tried for 0.5 s)")) << point.error().message;
  EXPECT_TRUE(Contains(point.error().hint, "--enable-v2=true")) << point.error().hint;
}

TEST(EtcdRendezvousTest, AServerErrorIsRetriedUntilItAnswers) {
  int calls = 0;
  HttpTestServer server([&](const std::string& request) {
    return ++calls < 3 ? Respond(503, "busy") : NoFenceYet(request);
  });
  auto point = ElectCoordinator({server.endpoint()}, "j", "node1", 29400, 10);
  ASSERT_TRUE(point.ok()) << point.error().message;
  EXPECT_TRUE(point->coordinator);
  EXPECT_EQ(server.requests().size(), 5u) << "two refused, the create, the fence read and written";
}

TEST(EtcdRendezvousTest, RefreshAndReleaseCompareTheValue) {
  HttpTestServer server([](const std::string& request) {
    if (request.starts_with("DELETE")) return Respond(412, R"({"errorCode":101,"message":"Compare failed"})");
    return Respond(200, "{}");
  });
  EtcdSettings etcd{server.endpoint(), "/primus/rdzv", 4.5};
  RendezvousPoint self{true, "h", 1, "h:1:ab"};
  ASSERT_TRUE(RefreshCoordinator(etcd, "j", self, 5).ok());
  // Another coordinator's key is left alone, and that is no error.
  ASSERT_TRUE(ReleaseCoordinator(etcd, "j", self, 5).ok());
  ASSERT_EQ(server.requests().size(), 3u);
  EXPECT_TRUE(server.requests()[0].starts_with(
      "PUT /v2/keys/primus/rdzv/j/coordinator?prevExist=true&refresh=true&prevValue=h%3A1%3Aab HTTP/1.1\r\n"))
      << server.requests()[0];
  EXPECT_TRUE(server.requests()[0].ends_with("\r\n\r\nttl=5")) << server.requests()[0];
  EXPECT_TRUE(server.requests()[1].starts_with("DELETE /v2/keys/primus/rdzv/j/coordinator?prevValue=h%3A1%3Aab "))
      << server.requests()[1];
  EXPECT_TRUE(server.requests()[2].starts_with("DELETE /v2/keys/primus/rdzv/j/fence?prevValue=h%3A1%3Aab "))
      << server.requests()[2];
  EXPECT_DOUBLE_EQ(etcd.RefreshInterval(), 1.5);
}

TEST(EtcdRendezvousTest, AnExpiredKeyIsClaimedAgainWithTheSameValue) {
  int calls = 0;
  HttpTestServer server([&calls](const std::string&) {
    return ++calls == 1 ? Respond(404, R"({"errorCode":100,"message":"Key not found"})") : Respond(201, "{}");
  });
  auto refreshed = RefreshCoordinator({server.endpoint()}, "j", {true, "h", 1, "h:1:ab"}, 5);
  ASSERT_TRUE(refreshed.ok()) << refreshed.error().message;
  EXPECT_EQ(*refreshed, Refreshed::kReclaimed);
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_TRUE(server.requests()[1].starts_with("PUT /v2/keys/primus/rdzv/j/coordinator?prevExist=false "))
      << server.requests()[1];
  EXPECT_TRUE(Contains(server.requests()[1], "value=h%3A1%3Aab")) << server.requests()[1];
}

TEST(EtcdRendezvousTest, AKeyAnotherAgentHoldsIsNotTakenBack) {
  HttpTestServer server([](const std::string&) {
    return Respond(412, R"({"errorCode":101,"message":"Compare failed"})");
  });
  auto refreshed = RefreshCoordinator({server.endpoint()}, "j", {true, "h", 1, "h:1:ab"}, 5);
  ASSERT_FALSE(refreshed.ok());
  EXPECT_TRUE(Contains(refreshed.error().message, "/v2/keys/primus/rdzv/j/coordinator on etcd at " +
                                                      server.endpoint() + " now names another agent"))
      << refreshed.error().message;
  EXPECT_EQ(server.requests().size(), 1u) << "no attempt to overwrite it";
}

}  // namespace
}  // namespace primus::job
