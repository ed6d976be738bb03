// The rendezvous store over real sockets on loopback.
#include "benchmark/tcp_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "free_port.h"

namespace primus::benchmark {
namespace {

using primus::testing::FreePort;

TEST(TcpStoreTest, SetThenGetAcrossClients) {
  int port = FreePort();
  auto server = StoreServer::Start(port);
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto a = StoreClient::Connect("127.0.0.1", port, 5);
  auto b = StoreClient::Connect("localhost", port, 5);
  ASSERT_TRUE(a.ok() && b.ok());
  std::string binary("\0id\xff", 4);
  ASSERT_TRUE(a->Set("nccl", binary).ok());
  auto got = b->Get("nccl", 5);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, binary);
  ASSERT_TRUE(b->Set("empty", "").ok());
  EXPECT_EQ(*a->Get("empty", 5), "");
}

TEST(TcpStoreTest, KeyPrefixesKeepGroupsApart) {
  int port = FreePort();
  auto server = StoreServer::Start(port);
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto plain = StoreClient::Connect("127.0.0.1", port, 5);
  auto group0 = StoreClient::Connect("127.0.0.1", port, 5);
  auto group1 = StoreClient::Connect("127.0.0.1", port, 5);
  ASSERT_TRUE(plain.ok() && group0.ok() && group1.ok());
  group0->SetKeyPrefix("group0/");
  group1->SetKeyPrefix("group1/");
  ASSERT_TRUE(group0->Set("id", "zero").ok());
  ASSERT_TRUE(group1->Set("id", "one").ok());
  EXPECT_EQ(*group0->Get("id", 5), "zero");
  EXPECT_EQ(*group1->Get("id", 5), "one");
  EXPECT_EQ(*plain->Get("group1/id", 5), "one");
  EXPECT_FALSE(plain->Get("id", 0.2).ok()) << "nobody set the unprefixed key";
}

TEST(TcpStoreTest, GetWaitsForALaterSet) {
  int port = FreePort();
  auto server = StoreServer::Start(port);
  ASSERT_TRUE(server.ok());
  std::thread setter([port] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto client = StoreClient::Connect("127.0.0.1", port, 5);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Set("late", std::string(100000, 'v')).ok());
  });
  auto waiter = StoreClient::Connect("127.0.0.1", port, 5);
  ASSERT_TRUE(waiter.ok());
  auto start = std::chrono::steady_clock::now();
  auto value = waiter->Get("late", 5);
  setter.join();
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(value->size(), 100000u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(90));
}

TEST(TcpStoreTest, ClientsConnectBeforeTheServerStarts) {
  int port = FreePort();
  std::unique_ptr<StoreServer> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto started = StoreServer::Start(port);
    ASSERT_TRUE(started.ok());
    server = std::move(*started);
  });
  auto client = StoreClient::Connect("127.0.0.1", port, 5);
  starter.join();
  ASSERT_TRUE(client.ok()) << client.error().message;
  EXPECT_TRUE(client->Set("k", "v").ok());
}

TEST(TcpStoreTest, TimeoutsAndRefusalsAreNamed) {
  int port = FreePort();
  auto refused = StoreClient::Connect("127.0.0.1", port, 0.2);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ExitCode::kUnavailable);
  EXPECT_NE(refused.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos);
  EXPECT_NE(refused.error().message.find("refused"), std::string::npos) << refused.error().message;

  auto server = StoreServer::Start(port);
  ASSERT_TRUE(server.ok());
  auto busy = StoreServer::Start(port);
  ASSERT_FALSE(busy.ok());
  EXPECT_NE(busy.error().message.find(std::to_string(port)), std::string::npos);
  auto client = StoreClient::Connect("127.0.0.1", port, 5);
  ASSERT_TRUE(client.ok());
  auto missing = client->Get("never", 0.2);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("never"), std::string::npos) << missing.error().message;
}

TEST(TcpStoreTest, ServerGoneIsAnError) {
  int port = FreePort();
  auto server = StoreServer::Start(port);
  ASSERT_TRUE(server.ok());
  auto client = StoreClient::Connect("127.0.0.1", port, 5);
  ASSERT_TRUE(client.ok());
  server->reset();
  auto value = client->Get("anything", 2);
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << value.error().message;
  EXPECT_TRUE(value.error().message.find("closed") != std::string::npos ||
              value.error().message.find("lost") != std::string::npos)
      << value.error().message;
}

}  // namespace
}  // namespace primus::benchmark
