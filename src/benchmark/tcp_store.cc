#include "benchmark/tcp_store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "util/seconds_left.h"

namespace primus::benchmark {
namespace {

using Clock = std::chrono::steady_clock;

std::string Encode(const std::string& text) {
  uint32_t size = static_cast<uint32_t>(text.size());
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[static_cast<size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xff);
  return out + text;
}

// Takes one length-prefixed string from the front of `buffer` at `offset`;
// false when it has not fully arrived.
bool Decode(const std::string& buffer, size_t* offset, std::string* text) {
  if (buffer.size() < *offset + 4) return false;
  uint32_t size = 0;
  for (int i = 0; i < 4; ++i) size |= static_cast<uint32_t>(static_cast<uint8_t>(buffer[*offset + static_cast<size_t>(i)])) << (8 * i);
  if (buffer.size() < *offset + 4 + size) return false;
  *text = buffer.substr(*offset + 4, size);
  *offset += 4 + size;
  return true;
}

void SendBlocking(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client is gone; its connection is closed when its read fails
    sent += static_cast<size_t>(n);
  }
}

}  // namespace

Result<std::unique_ptr<StoreServer>> StoreServer::Start(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || ::listen(fd, 1024) != 0) {
    int error = errno;
    ::close(fd);
    return UnavailableError(fmt::format("rank 0 cannot listen on port {} for the benchmark's rendezvous: {}", port,
                                        std::strerror(error)),
                            "choose a free --master-port");
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(fd);
    return UnavailableError(std::string("pipe: ") + std::strerror(errno));
  }
  return std::unique_ptr<StoreServer>(new StoreServer(fd, pipe_fds[0], pipe_fds[1], port));
}

StoreServer::StoreServer(int listen_fd, int wake_read, int wake_write, int port)
    : listen_fd_(listen_fd), wake_read_(wake_read), wake_write_(wake_write), port_(port) {
  thread_ = std::thread([this] { Serve(); });
}

StoreServer::~StoreServer() {
  char byte = 0;
  while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
}

void StoreServer::Serve() {
  struct Client {
    int fd;
    std::string input;
  };
  std::vector<Client> clients;
  std::map<std::string, std::string> data;
  std::multimap<std::string, int> waiting;  // key -> fd of a client whose Get waits for it
  while (true) {
    std::vector<pollfd> fds = {{wake_read_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const Client& client : clients) fds.push_back({client.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        clients.push_back({fd, ""});
      }
    }
    std::vector<int> closed;
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      Client& client = clients[i - 2];
      char chunk[4096];
      ssize_t n = ::recv(client.fd, chunk, sizeof(chunk), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        closed.push_back(client.fd);
        continue;
      }
      client.input.append(chunk, static_cast<size_t>(n));
      // Every complete request in the buffer.
      while (!client.input.empty()) {
        size_t offset = 1;
        std::string key, value;
        char op = client.input[0];
        if (op == 'S') {
          if (!Decode(client.input, &offset, &key) || !Decode(client.input, &offset, &value)) break;
          data[key] = value;
          SendBlocking(client.fd, "K");
          auto [first, last] = waiting.equal_range(key);
          for (auto it = first; it != last; ++it) SendBlocking(it->second, "V" + Encode(value));
          waiting.erase(first, last);
        } else if (op == 'G') {
          if (!Decode(client.input, &offset, &key)) break;
          auto found = data.find(key);
          if (found != data.end()) SendBlocking(client.fd, "V" + Encode(found->second));
          else waiting.emplace(key, client.fd);
        } else {
          closed.push_back(client.fd);  // not our protocol: drop the connection
          break;
        }
        client.input.erase(0, offset);
      }
    }
    for (int fd : closed) {
      for (auto it = waiting.begin(); it != waiting.end();) it = it->second == fd ? waiting.erase(it) : std::next(it);
      std::erase_if(clients, [fd](const Client& client) { return client.fd == fd; });
      ::close(fd);
    }
  }
  for (const Client& client : clients) ::close(client.fd);
}

Result<StoreClient> StoreClient::Connect(const std::string& host, int port, double timeout_s) {
  std::string address = fmt::format("{}:{}", host, port);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string last_error = "timed out";
  while (true) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int resolved = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (resolved != 0) {
      last_error = std::string("unknown host: ") + ::gai_strerror(resolved);
    } else {
      for (addrinfo* entry = found; entry; entry = entry->ai_next) {
        int fd = ::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC, entry->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, entry->ai_addr, entry->ai_addrlen) == 0) {
          ::freeaddrinfo(found);
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          return StoreClient(fd, address);
        }
        last_error = std::strerror(errno);
        ::close(fd);
      }
      ::freeaddrinfo(found);
    }
    if (SecondsLeft(deadline) <= 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return UnavailableError(fmt::format("cannot reach rank 0's rendezvous at {} within {} s: {}", address, timeout_s, last_error),
                          "check MASTER_ADDR/MASTER_PORT (--master-addr, --master-port) and that rank 0 started");
}

StoreClient::StoreClient(StoreClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), address_(std::move(other.address_)), prefix_(std::move(other.prefix_)) {}

StoreClient& StoreClient::operator=(StoreClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    address_ = std::move(other.address_);
    prefix_ = std::move(other.prefix_);
  }
  return *this;
}

StoreClient::~StoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

Status StoreClient::SendAll(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return TaskError(fmt::format("lost the rendezvous at {}: {}", address_, std::strerror(errno)));
    sent += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status StoreClient::ReceiveAll(char* data, size_t size, double timeout_s, const std::string& waiting_for) {
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  size_t received = 0;
  while (received < size) {
    double left = SecondsLeft(deadline);
    if (left <= 0) {
      return TaskError(fmt::format("waited {} s at the rendezvous {} for {}", timeout_s, address_, waiting_for),
                       "another rank failed or never started: look at the other ranks' logs");
    }
    pollfd fd{fd_, POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(std::min(left * 1000 + 1, 60000.0)));
    if (ready < 0 && errno != EINTR) return TaskError(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) continue;
    ssize_t n = ::recv(fd_, data + received, size - received, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return TaskError(fmt::format("the rendezvous at {} closed the connection (rank 0 ended)", address_));
    received += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status StoreClient::Set(const std::string& key, const std::string& value) {
  if (Status sent = SendAll("S" + Encode(prefix_ + key) + Encode(value)); !sent.ok()) return sent;
  char ack = 0;
  if (Status got = ReceiveAll(&ack, 1, 60, "the acknowledgement of " + key); !got.ok()) return got;
  if (ack != 'K') return TaskError("the rendezvous at " + address_ + " answered an unexpected byte");
  return Status::Ok();
}

Result<std::string> StoreClient::Get(const std::string& key, double timeout_s) {
  if (Status sent = SendAll("G" + Encode(prefix_ + key)); !sent.ok()) return sent.error();
  char header[5];
  if (Status got = ReceiveAll(header, 5, timeout_s, "key " + key); !got.ok()) return got.error();
  if (header[0] != 'V') return TaskError("the rendezvous at " + address_ + " answered an unexpected byte");
  uint32_t size = 0;
  for (int i = 0; i < 4; ++i) size |= static_cast<uint32_t>(static_cast<uint8_t>(header[1 + i])) << (8 * i);
  std::string value(size, '\0');
  if (size > 0) {
    if (Status got = ReceiveAll(value.data(), size, timeout_s, "key " + key); !got.ok()) return got.error();
  }
  return value;
}

}  // namespace primus::benchmark
