// The rendezvous of benchmark workers: a tiny key-value store served by
// rank 0 on MASTER_ADDR:MASTER_PORT (the port the agent reserves for the
// workers, where torch's TCPStore would listen), reached by every rank over
// TCP. It carries what ranks must exchange before their collective library
// can talk: the NCCL unique id, gloo's per-rank addresses, each rank's
// "Using devices" line. No MPI and no agent involvement: it works the same
// under direct, Slurm and Kubernetes, and a restarted job gets a fresh store
// with its fresh processes.
//
// Protocol (binary, one connection per client): 'S' key value -> 'K';
// 'G' key -> 'V' value, answered once the key is set. Strings are a 32-bit
// little-endian length and the bytes. Like torch's TCPStore it is not
// authenticated: it lives only as long as the benchmark and holds no secret.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "util/error.h"

namespace primus::benchmark {

class StoreServer {
 public:
  // Listens on every IPv4 address at `port`; a port in use is an
  // UnavailableError naming it. Serves from a thread until destroyed.
  static Result<std::unique_ptr<StoreServer>> Start(int port);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  int port() const { return port_; }

 private:
  StoreServer(int listen_fd, int wake_read, int wake_write, int port);
  void Serve();

  int listen_fd_;
  int wake_read_, wake_write_;
  int port_;
  std::thread thread_;
};

class StoreClient {
 public:
  // Connects to host:port, retrying until `timeout_s` (rank 0 may start later).
  static Result<StoreClient> Connect(const std::string& host, int port, double timeout_s);
  StoreClient(StoreClient&& other) noexcept;
  StoreClient& operator=(StoreClient&& other) noexcept;
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;
  ~StoreClient();

  // Every key of this client starts with `prefix` (a group of ranks' own
  // namespace in the same store: `benchmark comm --stride`).
  void SetKeyPrefix(std::string prefix) { prefix_ = std::move(prefix); }

  Status Set(const std::string& key, const std::string& value);
  // Waits until `key` is set (by any client), at most `timeout_s`.
  Result<std::string> Get(const std::string& key, double timeout_s);

 private:
  StoreClient(int fd, std::string address) : fd_(fd), address_(std::move(address)) {}
  Status SendAll(const std::string& bytes);
  Status ReceiveAll(char* data, size_t size, double timeout_s, const std::string& waiting_for);
  int fd_ = -1;
  std::string address_;  // "host:port" for messages
  std::string prefix_;
};

}  // namespace primus::benchmark
