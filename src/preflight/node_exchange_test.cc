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
  auto gather = std::async(std::launch::async, [&] { return GatherReports(port, 3, Report(0, "a", "MI300X"), 10, 0.05); });
  auto one = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(1, "b", "MI300X"), 10); });
  auto two = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(2, "c", "H100"), 10); });
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
  auto gather = std::async(std::launch::async, [&] { return GatherReports(port, 3, Report(0, "a", "x"), 1.0, 0.01); });
  auto one = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(1, "b", "x"), 5); });
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
  auto gather = std::async(std::launch::async, [&] { return GatherReports(port, 2, Report(0, "a", "x"), 10, 0.01); });
  auto one = std::async(std::launch::async, [&] { return SendReport("127.0.0.1", port, Report(1, "b", "x"), 10); });
  auto gathered = gather.get();
  ::close(holder);
  ASSERT_TRUE(gathered.ok()) << gathered.error().Format();
  EXPECT_NE(gathered->port, port);
  EXPECT_TRUE(gathered->nodes[1].has_value());
  SendVerdicts(*gathered, "PASS");
  EXPECT_EQ(*one.get(), "PASS");
}

TEST(NodeExchangeTest, UnreachableNodeZeroIsAnErrorNamingTheAddress) {
  int port = *io::PickFreePort();
  auto verdict = SendReport("127.0.0.1", port, Report(1, "b", "x"), 0.3);
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().code, ExitCode::kEnvironment);
  EXPECT_NE(verdict.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

}  // namespace
}  // namespace primus::preflight
