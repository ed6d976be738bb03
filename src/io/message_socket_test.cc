#include "io/message_socket.h"

#include <gtest/gtest.h>

#include "io/tcp_port.h"
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <string>
#include <thread>

namespace primus::io {
namespace {

// A port the kernel picks, then released, for tests that need a free one.
int FreePort() { return PickFreePort().value(); }

bool WaitReadable(int fd, int timeout_ms = 2000) {
  pollfd waiter{fd, POLLIN, 0};
  return ::poll(&waiter, 1, timeout_ms) == 1;
}

struct ConnectedPair {
  std::unique_ptr<MessageConnection> server, client;
};

ConnectedPair Connect(int port, const std::string& host = "127.0.0.1") {
  auto listener = ListenForNodes(port);
  EXPECT_TRUE(listener.ok()) << listener.error().message;
  auto client = ConnectToNode(host, port, 2);
  EXPECT_TRUE(client.ok()) << client.error().message;
  EXPECT_TRUE(WaitReadable(listener->get()));
  std::string peer;
  UniqueFd accepted = AcceptNode(listener->get(), &peer);
  EXPECT_TRUE(accepted.valid());
  EXPECT_TRUE(peer.starts_with(host == "::1" ? "::1:" : "127.0.0.1:")) << peer;
  return {std::make_unique<MessageConnection>(std::move(accepted), peer),
          std::make_unique<MessageConnection>(std::move(*client), host)};
}

TEST(MessageSocketTest, MessagesArriveWholeAndInOrder) {
  ConnectedPair pair = Connect(FreePort());
  ASSERT_TRUE(pair.client->Send(Json{{"type", "hello"}, {"n", 1}}));
  ASSERT_TRUE(pair.client->Send(Json{{"type", "heartbeat"}, {"text", "line\nbreak"}}));
  std::vector<Json> messages;
  while (messages.size() < 2) {
    ASSERT_TRUE(WaitReadable(pair.server->fd()));
    ASSERT_EQ(pair.server->Receive(&messages), MessageConnection::ReadResult::kOpen);
  }
  EXPECT_EQ(messages[0]["n"], 1);
  EXPECT_EQ(messages[1]["text"], "line\nbreak");
}

TEST(MessageSocketTest, ALargeMessageArrivesInPieces) {
  ConnectedPair pair = Connect(FreePort());
  std::string big(3 << 20, 'x');
  std::thread sender([&] { EXPECT_TRUE(pair.client->Send(Json{{"type", "failure"}, {"traceback", big}})); });
  std::vector<Json> messages;
  while (messages.empty()) {
    ASSERT_TRUE(WaitReadable(pair.server->fd()));
    ASSERT_EQ(pair.server->Receive(&messages), MessageConnection::ReadResult::kOpen);
  }
  sender.join();
  EXPECT_EQ(messages[0]["traceback"].get<std::string>().size(), big.size());
}

TEST(MessageSocketTest, PeerClosingIsReportedAfterItsLastMessages) {
  ConnectedPair pair = Connect(FreePort());
  ASSERT_TRUE(pair.client->Send(Json{{"type", "done"}}));
  pair.client.reset();
  std::vector<Json> messages;
  ASSERT_TRUE(WaitReadable(pair.server->fd()));
  EXPECT_EQ(pair.server->Receive(&messages), MessageConnection::ReadResult::kClosed);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["type"], "done");
  EXPECT_EQ(pair.server->error(), "connection closed");
}

TEST(MessageSocketTest, GarbageClosesTheConnection) {
  ConnectedPair pair = Connect(FreePort());
  const char garbage[] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_GT(::send(pair.client->fd(), garbage, sizeof(garbage) - 1, 0), 0);
  std::vector<Json> messages;
  ASSERT_TRUE(WaitReadable(pair.server->fd()));
  EXPECT_EQ(pair.server->Receive(&messages), MessageConnection::ReadResult::kClosed);
  EXPECT_NE(pair.server->error().find("malformed"), std::string::npos);
}

TEST(MessageSocketTest, IPv6LoopbackWorksToo) {
  int port = FreePort();
  auto listener = ListenForNodes(port);
  ASSERT_TRUE(listener.ok());
  auto client = ConnectToNode("::1", port, 2);
  if (!client.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << client.error().message;
  EXPECT_TRUE(WaitReadable(listener->get()));
}

TEST(MessageSocketTest, BusyPortIsUnavailableNamingIt) {
  int port = FreePort();
  auto first = ListenForNodes(port);
  ASSERT_TRUE(first.ok());
  auto second = ListenForNodes(port);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ExitCode::kUnavailable);
  EXPECT_NE(second.error().message.find("control port " + std::to_string(port) + " is already in use"),
            std::string::npos);
  EXPECT_NE(second.error().hint.find("--control-port"), std::string::npos);
}

TEST(MessageSocketTest, ConnectErrorsSayWhy) {
  int port = FreePort();  // released: nobody listens
  auto refused = ConnectToNode("127.0.0.1", port, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("refused"), std::string::npos) << refused.error().message;
  auto unknown = ConnectToNode("no-such-host.invalid", port, 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("cannot resolve no-such-host.invalid"), std::string::npos);
}

}  // namespace
}  // namespace primus::io
