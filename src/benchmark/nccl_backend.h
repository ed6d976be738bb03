// `benchmark comm` on GPUs: NCCL (NVIDIA) or RCCL (AMD), opened at run time
// with the CUDA/HIP runtime, inside primus-cli itself (all C APIs, so no
// C++ runtime is needed at load time). The library is the one the loader
// finds: libnccl.so.2 / librccl.so.1 on LD_LIBRARY_PATH first, which is how
// a custom build such as VCCL is used; a VCCL build is recognised by its
// name inside the file and shown as such.
//
// Rank 0 creates the NCCL unique id and publishes it in its store
// (tcp_store.h); the other ranks read it there: no MPI. Each rank drives the
// GPU of its LOCAL_RANK among the visible ones, on a non-blocking stream.
#pragma once

#include <memory>

#include "benchmark/comm_backend.h"
#include "benchmark/comm_worker.h"
#include "benchmark/gpu_api.h"

namespace primus::benchmark {

Result<std::unique_ptr<CommBackend>> OpenNcclBackend(GpuVendor vendor, const CommWorkerContext& context);

}  // namespace primus::benchmark
