#include "benchmark/nccl_backend.h"

#include <cstring>

#include <fmt/format.h>

#include "util/dynamic_library.h"

namespace primus::benchmark {
namespace {

// nccl.h (the same for RCCL): a 128-byte id passed by value, opaque
// communicators, ncclResult_t 0 = success, ncclSum = 0, and ncclDataType_t
// in the order of DataType.
struct NcclUniqueId {
  char internal[128];
};
constexpr int kNcclSum = 0;
constexpr int kNcclFloat64 = 8;
constexpr size_t kStatisticsDoubles = 16;  // per rank and exchange

struct NcclCalls {
  int (*get_version)(int*) = nullptr;
  int (*get_unique_id)(NcclUniqueId*) = nullptr;
  int (*comm_init_rank)(void**, int, NcclUniqueId, int) = nullptr;
  int (*comm_destroy)(void*) = nullptr;
  const char* (*get_error_string)(int) = nullptr;
  const char* (*get_last_error)(void*) = nullptr;  // optional (2.13+)
  int (*all_reduce)(const void*, void*, size_t, int, int, void*, void*) = nullptr;
  int (*all_gather)(const void*, void*, size_t, int, void*, void*) = nullptr;
  int (*reduce_scatter)(const void*, void*, size_t, int, int, void*, void*) = nullptr;
  int (*broadcast)(const void*, void*, size_t, int, int, void*, void*) = nullptr;
  int (*send)(const void*, size_t, int, int, void*, void*) = nullptr;
  int (*recv)(void*, size_t, int, int, void*, void*) = nullptr;
  int (*group_start)() = nullptr;
  int (*group_end)() = nullptr;
};

class NcclBackend : public CommBackend {
 public:
  NcclBackend(GpuApi runtime, DynamicLibrary library, NcclCalls calls, std::string flavour, int rank, int nranks,
              int device)
      : runtime_(std::move(runtime)), library_(std::move(library)), calls_(calls), flavour_(std::move(flavour)),
        rank_(rank), nranks_(nranks), device_(device) {}

  ~NcclBackend() override {
    if (comm_) calls_.comm_destroy(comm_);
    for (void* buffer : buffers_) runtime_.Free(buffer);
    runtime_.DestroyStream(stream_);
  }

  Status Initialize(StoreClient& store, double timeout_s) {
    if (Status status = runtime_.SetDevice(device_); !status.ok()) return status;
    auto stream = runtime_.CreateStream();
    if (!stream.ok()) return stream.error();
    stream_ = *stream;
    NcclUniqueId id{};
    if (rank_ == 0) {
      if (Status status = Check(calls_.get_unique_id(&id), "GetUniqueId"); !status.ok()) return status;
      if (Status status = store.Set("primus/nccl-unique-id", std::string(id.internal, sizeof(id.internal))); !status.ok()) {
        return status;
      }
    } else {
      auto published = store.Get("primus/nccl-unique-id", timeout_s);
      if (!published.ok()) return published.error();
      if (published->size() != sizeof(id.internal)) return TaskError("rank 0 published a malformed NCCL unique id");
      std::memcpy(id.internal, published->data(), sizeof(id.internal));
    }
    return Check(calls_.comm_init_rank(&comm_, nranks_, id, rank_), "CommInitRank");
  }

  std::string Describe() const override {
    int version = 0;
    std::string text = flavour_;
    if (calls_.get_version && calls_.get_version(&version) == 0 && version > 0) {
      // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9 (major*1000 + ... before).
      text += version >= 10000 ? fmt::format(" {}.{}.{}", version / 10000, (version / 100) % 100, version % 100)
                               : fmt::format(" {}.{}.{}", version / 1000, (version / 100) % 10, version % 100);
    }
    return text + " (" + library_.path() + ") on " + runtime_.Describe();
  }

  RankDevice Device() const override {
    RankDevice device;
    device.index = device_;
    auto bus = runtime_.PciBusId(device_);
    device.bus = bus.ok() && bus->size() > 2 ? bus->substr(0, bus->size() - 2) : "?";  // nccl-tests drops the function
    device.name = runtime_.DeviceName(device_);
    return device;
  }

  Result<void*> Allocate(size_t bytes) override {
    auto buffer = runtime_.Malloc(bytes);
    if (!buffer.ok()) return buffer.error();
    buffers_.push_back(*buffer);
    if (Status status = runtime_.Memset(*buffer, 0, bytes); !status.ok()) return status.error();
    return *buffer;
  }
  // Uploads and clears run on the default stream, which our non-blocking
  // stream does not wait for: both end with a device-wide wait, or the next
  // collective can read half an input or have its output cleared under it
  // (seen on an H200: reduce_scatter at 4 MiB, 1 run in 12 with wrong elements).
  Status Upload(void* buffer, const void* host, size_t bytes) override {
    if (Status status = runtime_.CopyToDevice(buffer, host, bytes); !status.ok()) return status;
    return runtime_.Synchronize();
  }
  Status Download(void* host, const void* buffer, size_t bytes) override { return runtime_.CopyToHost(host, buffer, bytes); }
  Status Zero(void* buffer, size_t bytes) override {
    if (Status status = runtime_.Memset(buffer, 0, bytes); !status.ok()) return status;
    return runtime_.Synchronize();
  }
  Status Wait() override { return runtime_.SynchronizeStream(stream_); }

  Status Start(Collective op, const void* send, void* recv, size_t count, DataType type, int root) override {
    int dtype = NcclDataType(type);
    size_t element = static_cast<size_t>(ElementSize(type));
    switch (op) {
      case Collective::kAllReduce:
        return Check(calls_.all_reduce(send, recv, count, dtype, kNcclSum, comm_, stream_), "AllReduce");
      case Collective::kAllGather:
        return Check(calls_.all_gather(send, recv, count, dtype, comm_, stream_), "AllGather");
      case Collective::kReduceScatter:
        return Check(calls_.reduce_scatter(send, recv, count, dtype, kNcclSum, comm_, stream_), "ReduceScatter");
      case Collective::kBroadcast:
        return Check(calls_.broadcast(send, recv, count, dtype, root, comm_, stream_), "Broadcast");
      case Collective::kAlltoAll: {
        // As nccl-tests: one grouped send and receive per peer.
        if (Status status = Check(calls_.group_start(), "GroupStart"); !status.ok()) return status;
        for (int peer = 0; peer < nranks_; ++peer) {
          const char* from = static_cast<const char*>(send) + static_cast<size_t>(peer) * count * element;
          char* to = static_cast<char*>(recv) + static_cast<size_t>(peer) * count * element;
          if (Status status = Check(calls_.send(from, count, dtype, peer, comm_, stream_), "Send"); !status.ok()) return status;
          if (Status status = Check(calls_.recv(to, count, dtype, peer, comm_, stream_), "Recv"); !status.ok()) return status;
        }
        return Check(calls_.group_end(), "GroupEnd");
      }
      case Collective::kSendRecv: {
        if (Status status = Check(calls_.group_start(), "GroupStart"); !status.ok()) return status;
        int next = (rank_ + 1) % nranks_, previous = (rank_ - 1 + nranks_) % nranks_;
        if (Status status = Check(calls_.send(send, count, dtype, next, comm_, stream_), "Send"); !status.ok()) return status;
        if (Status status = Check(calls_.recv(recv, count, dtype, previous, comm_, stream_), "Recv"); !status.ok()) return status;
        return Check(calls_.group_end(), "GroupEnd");
      }
    }
    return Status::Ok();
  }

  Result<std::vector<double>> AllGather(const std::vector<double>& mine) override {
    size_t bytes = mine.size() * sizeof(double);
    if (!stats_) {
      stats_bytes_ = kStatisticsDoubles * sizeof(double);
      auto buffer = runtime_.Malloc(stats_bytes_ * static_cast<size_t>(nranks_ + 1));
      if (!buffer.ok()) return buffer.error();
      stats_ = static_cast<char*>(*buffer);
      buffers_.push_back(stats_);
    }
    if (bytes > stats_bytes_) return TaskError("the statistics exchange is limited to 16 numbers per rank");
    std::vector<double> all(mine.size() * static_cast<size_t>(nranks_));
    char* gathered = stats_ + stats_bytes_;
    for (Status status : {runtime_.CopyToDevice(stats_, mine.data(), bytes),
                          Check(calls_.all_gather(stats_, gathered, mine.size(), kNcclFloat64, comm_, stream_), "AllGather"),
                          runtime_.SynchronizeStream(stream_),
                          runtime_.CopyToHost(all.data(), gathered, all.size() * sizeof(double))}) {
      if (!status.ok()) return status.error();
    }
    return all;
  }

 private:
  Status Check(int result, const char* call) const {
    if (result == 0) return Status::Ok();
    const char* text = calls_.get_error_string ? calls_.get_error_string(result) : nullptr;
    const char* last = calls_.get_last_error ? calls_.get_last_error(comm_) : nullptr;
    return TaskError(fmt::format("nccl{}: {}{}", call, text ? text : "error " + std::to_string(result),
                                 last && *last ? std::string(": ") + last : ""),
                     "rerun with NCCL_DEBUG=INFO; a peer rank may have failed first");
  }

  GpuApi runtime_;
  DynamicLibrary library_;
  NcclCalls calls_;
  std::string flavour_;
  int rank_, nranks_, device_;
  void* comm_ = nullptr;
  GpuStream stream_ = nullptr;
  std::vector<void*> buffers_;
  char* stats_ = nullptr;
  size_t stats_bytes_ = 0;
};

}  // namespace

Result<std::unique_ptr<CommBackend>> OpenNcclBackend(GpuVendor vendor, const CommWorkerContext& context) {
  auto runtime = GpuApi::Open(vendor);
  if (!runtime.ok()) return runtime.error();
  auto count = runtime->DeviceCount();
  if (!count.ok()) return count.error();
  if (context.env.local_rank >= *count) {
    return UnavailableError(fmt::format("LOCAL_RANK {} but this process sees {} GPU(s)", context.env.local_rank, *count),
                            "run no more workers per node than visible GPUs (--nproc-per-node, *_VISIBLE_DEVICES)");
  }
  bool nvidia = vendor == GpuVendor::kNvidia;
  auto library = nvidia ? DynamicLibrary::Open({"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2"}, "NCCL",
                                               "install NCCL (libnccl2) or put its lib directory on LD_LIBRARY_PATH "
                                               "(pip: site-packages/nvidia/nccl/lib; VCCL: its build's lib directory)")
                        : DynamicLibrary::Open({"librccl.so.1", "librccl.so", "/opt/rocm/lib/librccl.so.1"}, "RCCL",
                                               "install ROCm's RCCL and put /opt/rocm/lib on LD_LIBRARY_PATH");
  if (!library.ok()) return library.error();
  NcclCalls calls;
  const DynamicLibrary& l = *library;
  for (Status status : {l.Load("ncclGetVersion", &calls.get_version), l.Load("ncclGetUniqueId", &calls.get_unique_id),
                        l.Load("ncclCommInitRank", &calls.comm_init_rank), l.Load("ncclCommDestroy", &calls.comm_destroy),
                        l.Load("ncclGetErrorString", &calls.get_error_string), l.Load("ncclAllReduce", &calls.all_reduce),
                        l.Load("ncclAllGather", &calls.all_gather), l.Load("ncclReduceScatter", &calls.reduce_scatter),
                        l.Load("ncclBroadcast", &calls.broadcast), l.Load("ncclSend", &calls.send),
                        l.Load("ncclRecv", &calls.recv), l.Load("ncclGroupStart", &calls.group_start),
                        l.Load("ncclGroupEnd", &calls.group_end)}) {
    if (!status.ok()) return status.error();
  }
  calls.get_last_error = reinterpret_cast<const char* (*)(void*)>(l.Find("ncclGetLastError"));
  std::string flavour = nvidia ? "NCCL" : "RCCL";
  if (nvidia && FileContains(l.path(), "VCCL")) flavour = "VCCL";
  auto backend = std::make_unique<NcclBackend>(std::move(*runtime), std::move(*library), calls, flavour, context.env.rank,
                                               context.env.world_size, context.env.local_rank);
  if (Status status = backend->Initialize(context.store, context.timeout_s); !status.ok()) return status.error();
  return std::unique_ptr<CommBackend>(std::move(backend));
}

}  // namespace primus::benchmark
