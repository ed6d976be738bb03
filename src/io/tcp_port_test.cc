#include "io/tcp_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace primus::io {
namespace {

TEST(MasterPortTest, PickedPortIsFree) {
  auto port = PickFreePort();
  ASSERT_TRUE(port.ok());
  EXPECT_GT(*port, 0);
  EXPECT_TRUE(CheckPortFree(*port).ok());
}

TEST(MasterPortTest, PortWithAListenerIsUnavailableNamingIt) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin_port);

  Status status = CheckPortFree(port);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::kUnavailable);
  EXPECT_NE(status.error().message.find(std::to_string(port)), std::string::npos);
  ::close(listener);
  EXPECT_TRUE(CheckPortFree(port).ok());
}

}  // namespace
}  // namespace primus::io
