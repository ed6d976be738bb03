#include "benchmark/gloo_backend.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include "benchmark/minifloat.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

constexpr uint8_t kReduceScatterSlotPrefix = 0x7a;  // gloo's own algorithms use small prefixes
constexpr uint8_t kSendRecvSlotPrefix = 0x7b;

// gloo's rendezvous over our store. gloo reports failures by exception.
class GlooStore : public gloo::rendezvous::Store {
 public:
  GlooStore(StoreClient& store, double timeout_s) : store_(store), timeout_s_(timeout_s) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    if (Status status = store_.Set(key, std::string(data.begin(), data.end())); !status.ok()) {
      throw std::runtime_error(status.error().message);
    }
  }
  std::vector<char> get(const std::string& key) override {
    auto value = store_.Get(key, timeout_s_);
    if (!value.ok()) throw std::runtime_error(value.error().message);
    return std::vector<char>(value->begin(), value->end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, std::chrono::milliseconds(0)); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    double seconds = timeout.count() > 0 ? timeout.count() / 1000.0 : timeout_s_;
    for (const std::string& key : keys) {
      auto value = store_.Get(key, seconds);
      if (!value.ok()) throw std::runtime_error(value.error().message);
    }
  }

 private:
  StoreClient& store_;
  double timeout_s_;
};

// The local IPv4 address the kernel would use to reach `host` (no packet is sent).
std::string RouteSourceAddress(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || !found) return "";
  std::string address;
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t length = sizeof(local);
    char text[INET_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text))) {
      address = text;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return address;
}

// The first IPv4 address of interface `name`, "" when it has none.
std::string InterfaceAddress(const std::string& name) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string address;
  for (ifaddrs* entry = list; entry && address.empty(); entry = entry->ifa_next) {
    if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET || name != entry->ifa_name) continue;
    char text[INET_ADDRSTRLEN] = {};
    if (::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr, text, sizeof(text))) address = text;
  }
  ::freeifaddrs(list);
  return address;
}

template <typename T>
void SumOf(void* c, const void* a, const void* b, size_t n) {
  gloo::sum<T>(c, a, b, n);
}

// 16-bit floats: widen, add, round back (what torch's gloo backend does too).
void SumHalf(void* c_, const void* a_, const void* b_, size_t n) {
  auto* c = static_cast<uint16_t*>(c_);
  auto* a = static_cast<const uint16_t*>(a_);
  auto* b = static_cast<const uint16_t*>(b_);
  for (size_t i = 0; i < n; ++i) c[i] = FloatToHalf(HalfToFloat(a[i]) + HalfToFloat(b[i]));
}
void SumBfloat16(void* c_, const void* a_, const void* b_, size_t n) {
  auto* c = static_cast<uint16_t*>(c_);
  auto* a = static_cast<const uint16_t*>(a_);
  auto* b = static_cast<const uint16_t*>(b_);
  for (size_t i = 0; i < n; ++i) c[i] = FloatToBfloat16(Bfloat16ToFloat(a[i]) + Bfloat16ToFloat(b[i]));
}

using ReduceFunction = void (*)(void*, const void*, const void*, size_t);

ReduceFunction SumFunction(DataType type) {
  switch (type) {
    case DataType::kInt8: return SumOf<int8_t>;
    case DataType::kUint8: return SumOf<uint8_t>;
    case DataType::kInt32: return SumOf<int32_t>;
    case DataType::kUint32: return SumOf<uint32_t>;
    case DataType::kInt64: return SumOf<int64_t>;
    case DataType::kUint64: return SumOf<uint64_t>;
    case DataType::kHalf: return SumHalf;
    case DataType::kFloat: return SumOf<float>;
    case DataType::kDouble: return SumOf<double>;
    case DataType::kBfloat16: return SumBfloat16;
  }
  return SumOf<float>;
}

// gloo's option setters take a typed pointer only for the element size.
template <int Bytes>
struct Element;
template <> struct Element<1> { using type = uint8_t; };
template <> struct Element<2> { using type = uint16_t; };
template <> struct Element<4> { using type = uint32_t; };
template <> struct Element<8> { using type = uint64_t; };

class GlooBackend : public CommBackend {
 public:
  GlooBackend(std::shared_ptr<gloo::transport::Device> device, std::shared_ptr<gloo::rendezvous::Context> context,
              std::string where)
      : device_(std::move(device)), context_(std::move(context)), where_(std::move(where)) {}

  ~GlooBackend() override {
    for (void* buffer : buffers_) std::free(buffer);
  }

  std::string Describe() const override {
    return fmt::format("gloo {}.{}.{} over TCP ({})", GLOO_VERSION_MAJOR, GLOO_VERSION_MINOR, GLOO_VERSION_PATCH, where_);
  }

  RankDevice Device() const override { return {-1, "cpu", "gloo tcp " + where_}; }

  Result<void*> Allocate(size_t bytes) override {
    void* buffer = std::malloc(bytes);
    if (!buffer) return TaskError(fmt::format("cannot allocate {} MiB of host memory", bytes >> 20));
    // Zeroed and touched now: no page faults inside the timed loop, no denormals.
    std::memset(buffer, 0, bytes);
    buffers_.push_back(buffer);
    return buffer;
  }
  Status Upload(void* buffer, const void* host, size_t bytes) override {
    std::memmove(buffer, host, bytes);
    return Status::Ok();
  }
  Status Download(void* host, const void* buffer, size_t bytes) override {
    std::memmove(host, buffer, bytes);
    return Status::Ok();
  }
  Status Zero(void* buffer, size_t bytes) override {
    std::memset(buffer, 0, bytes);
    return Status::Ok();
  }
  Status Wait() override { return Status::Ok(); }

  Status Start(Collective op, const void* send, void* recv, size_t count, DataType type, int root) override {
    if (count == 0) return Status::Ok();
    try {
      switch (ElementSize(type)) {
        case 1: Run<1>(op, send, recv, count, type, root); break;
        case 2: Run<2>(op, send, recv, count, type, root); break;
        case 4: Run<4>(op, send, recv, count, type, root); break;
        default: Run<8>(op, send, recv, count, type, root); break;
      }
    } catch (const std::exception& error) {
      return TaskError(fmt::format("gloo {}: {}", CollectiveName(op), error.what()),
                       "a peer rank failed or the network dropped: look at the other ranks");
    }
    return Status::Ok();
  }

  Result<std::vector<double>> AllGather(const std::vector<double>& mine) override {
    std::vector<double> all(mine.size() * static_cast<size_t>(context_->size));
    try {
      gloo::AllgatherOptions options(context_);
      options.setInput(const_cast<double*>(mine.data()), mine.size());
      options.setOutput(all.data(), all.size());
      options.setTag(NextTag());
      gloo::allgather(options);
    } catch (const std::exception& error) {
      return TaskError(std::string("gloo allgather of the statistics: ") + error.what());
    }
    return all;
  }

 private:
  uint32_t NextTag() { return tag_++; }

  void* Scratch(size_t bytes) {
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    return scratch_.data();
  }

  template <int Bytes>
  void Run(Collective op, const void* send_const, void* recv, size_t count, DataType type, int root) {
    using T = typename Element<Bytes>::type;
    T* send = static_cast<T*>(const_cast<void*>(send_const));
    T* out = static_cast<T*>(recv);
    bool in_place = send_const == recv;
    size_t n = static_cast<size_t>(context_->size);
    switch (op) {
      case Collective::kAllReduce: {
        gloo::AllreduceOptions options(context_);
        if (!in_place) options.setInput(send, count);
        options.setOutput(out, count);
        options.setReduceFunction(SumFunction(type));
        options.setTag(NextTag());
        gloo::allreduce(options);
        break;
      }
      case Collective::kAllGather: {
        gloo::AllgatherOptions options(context_);
        // In place, this rank's block already sits at its place in the output.
        if (send != out + count * static_cast<size_t>(context_->rank)) options.setInput(send, count);
        options.setOutput(out, count * n);
        options.setTag(NextTag());
        gloo::allgather(options);
        break;
      }
      case Collective::kAlltoAll: {
        if (in_place) {
          std::memcpy(Scratch(count * n * Bytes), send, count * n * Bytes);
          send = static_cast<T*>(Scratch(count * n * Bytes));
        }
        gloo::AlltoallOptions options(context_);
        options.setInput(send, count * n);
        options.setOutput(out, count * n);
        options.setTag(NextTag());
        gloo::alltoall(options);
        break;
      }
      case Collective::kBroadcast: {
        gloo::BroadcastOptions options(context_);
        if (context_->rank == root && !in_place) options.setInput(send, count);
        options.setOutput(out, count);
        options.setRoot(root);
        options.setTag(NextTag());
        gloo::broadcast(options);
        break;
      }
      case Collective::kReduceScatter:
        ReduceScatterRing(send, out, count * Bytes, SumFunction(type), Bytes);
        break;
      case Collective::kSendRecv: {
        if (context_->size == 1) {  // to and from itself: gloo has no pair for its own rank
          if (!in_place) std::memcpy(out, send, count * Bytes);
          break;
        }
        if (in_place) {
          std::memcpy(Scratch(count * Bytes), send, count * Bytes);
          send = static_cast<T*>(Scratch(count * Bytes));
        }
        int next = (context_->rank + 1) % context_->size;
        int previous = (context_->rank - 1 + context_->size) % context_->size;
        uint64_t slot = gloo::Slot::build(kSendRecvSlotPrefix, NextTag());
        auto outgoing = context_->createUnboundBuffer(send, count * Bytes);
        auto incoming = context_->createUnboundBuffer(out, count * Bytes);
        incoming->recv(previous, slot);
        outgoing->send(next, slot);
        incoming->waitRecv(context_->getTimeout());
        outgoing->waitSend(context_->getTimeout());
        break;
      }
    }
  }

  // Ring reduce-scatter: n-1 steps; at step s this rank sends its partial
  // sum of block (rank-s-1) to the next rank, receives the previous rank's
  // partial sum of block (rank-s-2) and adds its own share; after the last
  // step it holds block `rank` fully reduced. `block` bytes per rank.
  void ReduceScatterRing(const void* send, void* out, size_t block, ReduceFunction reduce, int element) {
    int n = context_->size, rank = context_->rank;
    bool in_place = static_cast<const uint8_t*>(send) + block * static_cast<size_t>(rank) == out;
    uint8_t* work = in_place ? static_cast<uint8_t*>(const_cast<void*>(send)) : static_cast<uint8_t*>(Scratch(block * static_cast<size_t>(n) + block));
    if (!in_place) std::memcpy(work, send, block * static_cast<size_t>(n));
    if (n == 1) {
      if (!in_place) std::memcpy(out, work, block);
      return;
    }
    std::vector<uint8_t> incoming_bytes(block);
    auto whole = context_->createUnboundBuffer(work, block * static_cast<size_t>(n));
    auto incoming = context_->createUnboundBuffer(incoming_bytes.data(), block);
    int next = (rank + 1) % n, previous = (rank - 1 + n) % n;
    for (int step = 0; step < n - 1; ++step) {
      size_t send_block = static_cast<size_t>(((rank - step - 1) % n + n) % n);
      size_t recv_block = static_cast<size_t>(((rank - step - 2) % n + n) % n);
      uint64_t slot = gloo::Slot::build(kReduceScatterSlotPrefix, NextTag());
      incoming->recv(previous, slot);
      whole->send(next, slot, send_block * block, block);
      incoming->waitRecv(context_->getTimeout());
      whole->waitSend(context_->getTimeout());
      uint8_t* mine = work + recv_block * block;
      reduce(mine, mine, incoming_bytes.data(), block / static_cast<size_t>(element));
    }
    if (!in_place) std::memcpy(out, work + static_cast<size_t>(rank) * block, block);
  }

  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::string where_;  // the interface and address gloo uses, and why
  std::vector<void*> buffers_;
  std::vector<uint8_t> scratch_;
  uint32_t tag_ = 1;
};

}  // namespace

Result<std::unique_ptr<CommBackend>> OpenGlooBackend(const CommWorkerContext& context) {
  gloo::transport::tcp::attr attr;
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    attr.iface = Split(ifname, ',').front();
  } else {
    attr.hostname = RouteSourceAddress(context.env.master_addr);
    if (attr.hostname.empty()) {
      return UnavailableError("no local address routes to MASTER_ADDR " + context.env.master_addr,
                              "set GLOO_SOCKET_IFNAME to the interface the ranks share");
    }
  }
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto gloo_context = std::make_shared<gloo::rendezvous::Context>(context.env.rank, context.env.world_size);
    gloo_context->setTimeout(std::chrono::milliseconds(static_cast<int64_t>(context.timeout_s * 1000)));
    GlooStore store(context.store, context.timeout_s);
    gloo::rendezvous::PrefixStore prefixed("gloo", store);
    gloo_context->connectFullMesh(prefixed, device);
    // "eth0 10.0.0.2 (GLOO_SOCKET_IFNAME)" or "10.0.0.2 (route to MASTER_ADDR)"
    std::string where = attr.iface.empty() ? attr.hostname + " (route to MASTER_ADDR)"
                                           : attr.iface + " " + InterfaceAddress(attr.iface) + " (GLOO_SOCKET_IFNAME)";
    return std::unique_ptr<CommBackend>(new GlooBackend(device, gloo_context, where));
  } catch (const std::exception& error) {
    return UnavailableError(std::string("gloo could not connect the ranks: ") + error.what(),
                            "check GLOO_SOCKET_IFNAME and that every host reaches the others");
  }
}

}  // namespace primus::benchmark
