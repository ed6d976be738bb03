#include "free_port.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace primus::testing {
namespace {

// Binds `port` (0: the kernel's choice) on the IPv6 wildcard; the port bound,
// or 0 when it was taken.
int Bind(int port) {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  address.sin6_port = htons(static_cast<uint16_t>(port));
  socklen_t length = sizeof(address);
  int bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    bound = ntohs(address.sin6_port);
  }
  ::close(fd);
  return bound;
}

}  // namespace

int FreePort() { return Bind(0); }

int FreePortPair() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int port = Bind(0);
    if (port > 0 && port < 65535 && Bind(port + 1) == port + 1) return port;
  }
  return 0;
}

}  // namespace primus::testing
