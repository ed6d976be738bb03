#include "preflight/node_exchange.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

#include "io/tcp_port.h"
#include "preflight/cross_node_checks.h"

namespace primus::preflight {
namespace {

const std::string kToken = "job-token-0123";

NodeReport Report(int rank, const std::string& host, const std::string& model) {
  NodeReport report;
  report.node_rank = rank;
  report.host = host;
  report.results.push_back(Pass("host", "memlock", "unlimited"));
  report.facts["gpu_model"] = model;
  return report;
}

TEST(NodeExchangeTest, NodeZeroGathersMeasuresAndJudges) {
  int port = *io::PickFreePort();
  auto gather = std::async(std::launch::async, [&] { return GatherReports(port, 3, Report(0, "a", "MI300X"), kToken, 10, 0.05); });
  auto one = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(1, "b", "MI300X"), kToken, 10); });
  auto two = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(2, "c", "H100"), kToken, 10); });
  auto gathered = gather.get();
  ASSERT_TRUE(gathered.ok()) << gathered.error().Format();
  ASSERT_EQ(gathered->nodes.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) ASSERT_TRUE(gathered->nodes[rank].has_value()) << rank;
  EXPECT_EQ(gathered->nodes[2]->host, "c");
  ASSERT_EQ(gathered->links.size(), 2u);
  EXPECT_GT(gathered->links[1].rtt_ms, 0);
  EXPECT_LT(std::abs(gathered->links[1].clock_offset_ms), 100);  // one clock
  EXPECT_GT(gathered->links[1].bandwidth_gbs, 0.01);
  AddCrossNodeChecks(&*gathered, {}, 10);
  EXPECT_EQ(Worst(gathered->nodes[1]->results), CheckStatus::kPass);
  EXPECT_EQ(Worst(gathered->nodes[2]->results), CheckStatus::kFail);  // the odd model out
  SendVerdicts(*gathered, "FAIL");
  EXPECT_EQ(*one.get(), "FAIL");
  EXPECT_EQ(*two.get(), "FAIL");
}

TEST(NodeExchangeTest, ANodeThatNeverReportsIsNamedFromTheHostList) {
  int port = *io::PickFreePort();
  auto gather = std::async(std::launch::async, [&] { return GatherReports(port, 3, Report(0, "a", "x"), kToken, 1.0, 0.01); });
  auto one = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(1, "b", "x"), kToken, 5); });
  auto gathered = gather.get();
  ASSERT_TRUE(gathered.ok());
  EXPECT_FALSE(gathered->nodes[2].has_value());
  AddCrossNodeChecks(&*gathered, {"a", "b", "c"}, 1.0);
  ASSERT_TRUE(gathered->nodes[2].has_value());
  EXPECT_EQ(gathered->nodes[2]->host, "c");
  EXPECT_EQ(Worst(gathered->nodes[2]->results), CheckStatus::kFail);
  SendVerdicts(*gathered, "FAIL");
  EXPECT_EQ(*one.get(), "FAIL");
}

// Something else holds MASTER_PORT on node 0: preflight serves on a fallback
// port and the greeting tells the peer it found the right one.
TEST(NodeExchangeTest, ATakenPortFallsBackAndPeersFindIt) {
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(holder, 8), 0);
  socklen_t length = sizeof(address);
  ::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin_port);
  auto gather = std::async(std::launch::async, [&] { return GatherReports(port, 2, Report(0, "a", "x"), kToken, 10, 0.01); });
  auto one = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(1, "b", "x"), kToken, 10); });
  auto gathered = gather.get();
  ::close(holder);
  ASSERT_TRUE(gathered.ok()) << gathered.error().Format();
  EXPECT_NE(gathered->port, port);
  EXPECT_TRUE(gathered->nodes[1].has_value());
  SendVerdicts(*gathered, "PASS");
  EXPECT_EQ(*one.get(), "PASS");
}

// A node with another token is refused by node 0, and node 0 goes on
// waiting for the real one.
TEST(NodeExchangeTest, ANodeWithoutTheTokenIsRefusedAndNeverCounts) {
  int port = *io::PickFreePort();
  auto gather = std::async(std::launch::async, [&] { return GatherReports(port, 2, Report(0, "a", "x"), kToken, 10, 0.01); });
  auto stranger = SendReport("127.0.0.1", port, Report(1, "evil", "x"), "guessed-token", 10);
  ASSERT_FALSE(stranger.ok());
  EXPECT_NE(stranger.error().message.find("refused this node: wrong job token"), std::string::npos)
      << stranger.error().message;
  auto one = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(1, "b", "x"), kToken, 10); });
  auto gathered = gather.get();
  ASSERT_TRUE(gathered.ok()) << gathered.error().Format();
  EXPECT_EQ(gathered->nodes[1]->host, "b");
  SendVerdicts(*gathered, "PASS");
  EXPECT_EQ(*one.get(), "PASS");
}

// What listens on node 0's port without the token is never sent a report.
TEST(NodeExchangeTest, AnImpostorNode0CannotProveItselfAndGetsNoReport) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t length = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin_port);
  std::string received;
  auto impostor = std::async(std::launch::async, [&] {
    int fd = ::accept(listener, nullptr, nullptr);
    std::string greeting = "PRIMUS-PREFLIGHT 2 0123456789abcdef0123456789abcdef\nproof 00\nverdict PASS\n";
    (void)!::write(fd, greeting.data(), greeting.size());
    char buffer[4096];
    ssize_t n;
    timeval wait{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) received.append(buffer, static_cast<size_t>(n));
    ::close(fd);
  });
  auto verdict = SendReport("127.0.0.1", port, Report(1, "b", "x"), kToken, 1.5);
  impostor.get();
  ::close(listener);
  ASSERT_FALSE(verdict.ok()) << "a verdict from a node 0 that cannot prove itself is never taken";
  EXPECT_NE(verdict.error().message.find("could not prove"), std::string::npos) << verdict.error().message;
  EXPECT_EQ(received.find("memlock"), std::string::npos) << "no report was sent: " << received;
  EXPECT_EQ(received.find(kToken), std::string::npos);
}

// A malformed report (a string node rank, nulls, a deep nesting) is refused
// without ending node 0.
TEST(NodeExchangeTest, AMalformedReportIsRefusedWithoutEndingNode0) {
  for (const char* line : {R"({"node_rank": "1", "results": []})", R"({"node_rank": 1, "results": [null, 5, {"status": 3}], "facts": {"a": 1}})",
                           "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]", "not json"}) {
    auto report = ReportFromJson(line);
    if (report.ok()) {
      EXPECT_EQ(report->node_rank, 1) << line;
    }
  }
  EXPECT_FALSE(ReportFromJson(R"({"node_rank": "1", "results": []})").ok());
  auto odd = ReportFromJson(R"({"node_rank": 1, "results": [null, 5, {"status": 3, "name": "a\u001b[2Jb"}]})");
  ASSERT_TRUE(odd.ok());
  ASSERT_EQ(odd->results.size(), 1u);
  EXPECT_EQ(odd->results[0].status, CheckStatus::kFail);
  EXPECT_EQ(odd->results[0].name.find('\x1b'), std::string::npos) << "no terminal codes from another node";
}

TEST(NodeExchangeTest, UnreachableNodeZeroIsAnErrorNamingTheAddress) {
  int port = *io::PickFreePort();
  auto verdict = SendReport("127.0.0.1", port, Report(1, "b", "x"), kToken, 0.3);
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().code, ExitCode::kUnavailable);
  EXPECT_NE(verdict.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

}  // namespace
}  // namespace primus::preflight
