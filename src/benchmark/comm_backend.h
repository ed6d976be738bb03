// The interface `benchmark comm` drives, one object per rank: gloo over TCP
// on CPUs (primus-comm-worker), NCCL/RCCL on GPUs (primus-cli itself). The
// driver (comm_benchmark.h) only allocates buffers, moves test data in and
// out, starts collectives and waits for them, so the timing loop, the data
// check and the nccl-tests output are the same code for every library.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/collective.h"
#include "benchmark/comm_data.h"
#include "util/error.h"

namespace primus::benchmark {

// How a rank appears in nccl-tests' "# Using devices" list.
struct RankDevice {
  int index = -1;           // the GPU ordinal; -1 on the CPU
  std::string bus = "cpu";  // "0000:0c:00" (domain:bus:device) on GPUs
  std::string name;         // "NVIDIA H100 80GB HBM3", "gloo tcp eth0 10.0.0.1"
};

class CommBackend {
 public:
  virtual ~CommBackend() = default;
  // One line for the output header: "NCCL 2.28.9 (/usr/lib/libnccl.so.2)".
  virtual std::string Describe() const = 0;
  virtual RankDevice Device() const = 0;

  // Memory where collectives read and write (device memory on GPUs); owned
  // and freed by the backend.
  virtual Result<void*> Allocate(size_t bytes) = 0;
  virtual Status Upload(void* buffer, const void* host, size_t bytes) = 0;
  virtual Status Download(void* host, const void* buffer, size_t bytes) = 0;
  virtual Status Zero(void* buffer, size_t bytes) = 0;

  // Starts one collective on `count` elements (CollectiveCounts::param_count).
  // Libraries that run synchronously (gloo) finish it here; GPU libraries
  // enqueue it and Wait() waits for everything started.
  virtual Status Start(Collective op, const void* send, void* recv, size_t count, DataType type, int root) = 0;
  virtual Status Wait() = 0;

  // Every rank's `mine`, in rank order (the statistics exchange after each row).
  virtual Result<std::vector<double>> AllGather(const std::vector<double>& mine) = 0;
};

}  // namespace primus::benchmark
