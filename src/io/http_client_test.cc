#include "io/http_client.h"

#include <gtest/gtest.h>

#include <string>

#include "free_port.h"
#include "http_test_server.h"
#include "text.h"
#include "wait_for.h"

namespace primus::io {
namespace {

using primus::testing::CannedReply;
using primus::testing::Contains;
using primus::testing::HttpTestServer;
using primus::testing::Respond;
using primus::testing::SecondsSince;

HttpEndpoint Loopback(int port) { return {"127.0.0.1", port}; }

TEST(HttpEndpointTest, ReadsHostPortWithOrWithoutScheme) {
  auto plain = ParseHttpEndpoint("etcd-0.cluster:2380", 2379, "endpoint");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->host, "etcd-0.cluster");
  EXPECT_EQ(plain->port, 2380);
  auto url = ParseHttpEndpoint(" HTTP://10.0.0.1:4001/ ", 2379, "endpoint");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->Describe(), "10.0.0.1:4001");
  auto bare = ParseHttpEndpoint("node7", 2379, "endpoint");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->Describe(), "node7:2379");
  auto v6 = ParseHttpEndpoint("[fe80::1%eth0]:23", 2379, "endpoint");
  ASSERT_TRUE(v6.ok()) << v6.error().message;
  EXPECT_EQ(v6->host, "fe80::1%eth0");
  EXPECT_EQ(v6->Describe(), "[fe80::1%eth0]:23");
  auto bare_v6 = ParseHttpEndpoint("::1", 2379, "endpoint");
  ASSERT_TRUE(bare_v6.ok());
  EXPECT_EQ(bare_v6->Describe(), "[::1]:2379");
}

TEST(HttpEndpointTest, RefusesWhatItCannotReach) {
  for (const char* text : {"https://etcd:2379", "ftp://etcd", "etcd:2379/v2", "etcd:0", "etcd:65536", "etcd:x",
                           "etcd:", ":2379", "", "et cd:1", "[::1", "[::1]x", "a;b:1"}) {
    auto endpoint = ParseHttpEndpoint(text, 2379, "--rdzv-endpoint");
    ASSERT_FALSE(endpoint.ok()) << text;
    EXPECT_EQ(endpoint.error().code, ExitCode::kConfig) << text;
    EXPECT_TRUE(endpoint.error().message.starts_with("--rdzv-endpoint \"")) << endpoint.error().message;
    EXPECT_FALSE(endpoint.error().hint.empty());
  }
  EXPECT_TRUE(Contains(ParseHttpEndpoint("https://e:1", 2379, "x").error().hint, "plain http"));
}

TEST(HttpFormTest, PercentEncodesEverythingButUnreservedCharacters) {
  EXPECT_EQ(FormEncode({{"value", "10.0.0.1:29500:ab"}, {"ttl", "10"}}), "value=10.0.0.1%3A29500%3Aab&ttl=10");
  EXPECT_EQ(FormEncode({{"a b", "x&y=z/\xc3\xa9~._-"}}), "a%20b=x%26y%3Dz%2F%C3%A9~._-");
  EXPECT_EQ(FormEncode({}), "");
}

TEST(HttpClientTest, SendsTheRequestAndReadsAContentLengthBody) {
  HttpTestServer server([](const std::string&) { return Respond(201, "{\"action\":\"create\"}"); });
  auto response = SendHttpRequest(Loopback(server.port()), {"PUT", "/v2/keys/a?prevExist=false", "value=x"}, 5);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->content_type, "application/json");
  EXPECT_EQ(response->body, "{\"action\":\"create\"}");
  ASSERT_EQ(server.requests().size(), 1u);
  std::string request = server.requests()[0];
  EXPECT_TRUE(request.starts_with("PUT /v2/keys/a?prevExist=false HTTP/1.1\r\n")) << request;
  EXPECT_TRUE(Contains(request, "\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n")) << request;
  EXPECT_TRUE(Contains(request, "\r\nContent-Type: application/x-www-form-urlencoded\r\n")) << request;
  EXPECT_TRUE(Contains(request, "\r\nContent-Length: 7\r\n")) << request;
  EXPECT_TRUE(request.ends_with("\r\n\r\nvalue=x")) << request;
}

TEST(HttpClientTest, ReadsAChunkedBodyArrivingInPieces) {
  HttpTestServer server([](const std::string&) {
    return CannedReply{{"HTTP/1.1 200 OK\r\nTransfer-", "Encoding: chunked\r\n\r\n5;ext=1\r\nhel", "lo\r\n",
                        "7\r\n, world\r\n0\r\n", "X-Trailer: t\r\n\r\n"}};
  });
  auto response = SendHttpRequest(Loopback(server.port()), {"GET", "/", ""}, 5);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello, world");
  EXPECT_TRUE(server.requests()[0].starts_with("GET / HTTP/1.1\r\n"));
  EXPECT_FALSE(Contains(server.requests()[0], "Content-Length"));
}

TEST(HttpClientTest, ReadsABodyWithoutFramingUpToTheClose) {
  HttpTestServer server([](const std::string&) { return CannedReply{{"HTTP/1.0 404 Not Found\r\n\r\n", "gone"}}; });
  auto response = SendHttpRequest(Loopback(server.port()), {"DELETE", "/k", ""}, 5);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->body, "gone");
  EXPECT_EQ(response->content_type, "");
}

// Each malformed response is an exit-4 error naming the endpoint and what was wrong.
TEST(HttpClientTest, RefusesMalformedResponses) {
  struct Case {
    std::vector<std::string> pieces;
    std::string expected;
  };
  std::vector<Case> cases = {
      {{"SSH-2.0-OpenSSH_9.2\r\n\r\n"}, "malformed status line \"SSH-2.0-OpenSSH_9.2\""},
      {{"HTTP/1.1 20 OK\r\n\r\n"}, "malformed status line"},
      {{"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"}, "malformed header line \"no colon here\""},
      {{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"}, "malformed Content-Length \"-1\""},
      {{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"}, "closed after 3 of 10 body bytes"},
      {{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}, "malformed chunk size \"zz\""},
      {{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n"}, "chunk not followed by CRLF"},
      {{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab"}, "closed inside a chunk"},
      {{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"}, "unsupported Transfer-Encoding"},
      {{"HTTP/1.1 200 OK\r\nContent-Le"}, "closed inside the response headers"},
      {{}, "closed the connection without a response"},
  };
  for (const Case& test : cases) {
    HttpTestServer server([&](const std::string&) { return CannedReply{test.pieces}; });
    auto response = SendHttpRequest(Loopback(server.port()), {"GET", "/", ""}, 5);
    ASSERT_FALSE(response.ok()) << test.expected;
    EXPECT_EQ(response.error().code, ExitCode::kUnavailable);
    EXPECT_TRUE(response.error().message.starts_with("HTTP GET to " + server.endpoint() + " failed: "))
        << response.error().message;
    EXPECT_TRUE(Contains(response.error().message, test.expected)) << response.error().message;
    EXPECT_TRUE(Contains(response.error().hint, server.endpoint())) << response.error().hint;
  }
}

TEST(HttpClientTest, RefusesABodyOverTheLimitNamingIt) {
  std::string big(kMaxHttpResponseBytes + 1, 'x');
  HttpTestServer declared([&](const std::string&) { return Respond(200, big); });
  auto response = SendHttpRequest(Loopback(declared.port()), {"GET", "/", ""}, 5);
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(Contains(response.error().message, "larger than the limit of 1048576 bytes")) << response.error().message;

  // Chunked and unframed bodies are cut off as they grow.
  HttpTestServer chunked([](const std::string&) {
    return CannedReply{{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "40\r\n" + std::string(64, 'y') +
                                                                                      "\r\n40\r\n" + std::string(64, 'y') + "\r\n"},
                       true};
  });
  response = SendHttpRequest(Loopback(chunked.port()), {"GET", "/", ""}, 5, 100);
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(Contains(response.error().message, "larger than the limit of 100 bytes")) << response.error().message;

  HttpTestServer unframed([](const std::string&) {
    return CannedReply{{"HTTP/1.1 200 OK\r\n\r\n", std::string(150, 'z')}, true};
  });
  response = SendHttpRequest(Loopback(unframed.port()), {"GET", "/", ""}, 5, 100);
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(Contains(response.error().message, "larger than the limit of 100 bytes")) << response.error().message;
}

TEST(HttpClientTest, GivesUpOnAStalledServerAtTheDeadline) {
  HttpTestServer server([](const std::string&) { return CannedReply{{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"}, true}; });
  auto started = std::chrono::steady_clock::now();
  auto response = SendHttpRequest(Loopback(server.port()), {"GET", "/", ""}, 0.3);
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(Contains(response.error().message, "no complete response within 0.3 s")) << response.error().message;
  EXPECT_GE(SecondsSince(started), 0.25);
  EXPECT_LT(SecondsSince(started), 2.0);
}

TEST(HttpClientTest, NamesTheEndpointWhenNothingListens) {
  int port = testing::FreePort();
  auto response = SendHttpRequest(Loopback(port), {"PUT", "/", ""}, 2);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ExitCode::kUnavailable);
  EXPECT_EQ(response.error().message, "HTTP PUT to 127.0.0.1:" + std::to_string(port) + " failed: Connection refused");

  auto unknown = SendHttpRequest({"no-such-host.invalid", 2379}, {"GET", "/", ""}, 2);
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.error().message, "no-such-host.invalid:2379 failed: cannot resolve")) << unknown.error().message;
}

}  // namespace
}  // namespace primus::io
