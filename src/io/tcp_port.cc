#include "io/tcp_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "io/unique_fd.h"

namespace primus::io {
namespace {

// Binds a listening-style socket to `port` on the IPv4 wildcard; 0 on success,
// else errno.
int TryBind(int port, int* bound_port) {
  UniqueFd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) return errno;
  int one = 1;
  ::setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return errno;
  // listen() is what conflicts with another listener under SO_REUSEADDR.
  if (::listen(sock.get(), 1) != 0) return errno;
  if (bound_port != nullptr) {
    socklen_t length = sizeof(address);
    if (::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) return errno;
    *bound_port = ntohs(address.sin_port);
  }
  return 0;
}

}  // namespace

Result<int> PickFreePort() {
  int port = 0;
  if (int error = TryBind(0, &port); error != 0) {
    return UnavailableError(std::string("cannot find a free TCP port: ") + std::strerror(error));
  }
  return port;
}

Status CheckPortFree(int port) {
  int error = TryBind(port, nullptr);
  if (error == 0) return Status::Ok();
  if (error == EADDRINUSE) {
    return UnavailableError(
        "master port " + std::to_string(port) + " is already in use on this node",
        "stop what listens there (ss -ltnp 'sport = :" + std::to_string(port) +
            "'), or pick another port; single-node runs can leave the port unset for a free one");
  }
  return UnavailableError("cannot bind master port " + std::to_string(port) + ": " +
                          std::strerror(error));
}

}  // namespace primus::io
