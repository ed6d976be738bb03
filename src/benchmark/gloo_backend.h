// `benchmark comm` on CPUs: Facebook's gloo (Debian's libgloo) over TCP,
// the library torch.distributed's gloo backend runs on. It is a C++ library
// with a dynamic libstdc++, so it lives in primus-comm-worker, a separate
// executable built beside primus-cli, never in primus-cli itself (which
// must load with glibc alone). Ranks meet through rank 0's store (gloo's
// full-mesh rendezvous over a PrefixStore "gloo/").
//
// all_reduce, all_gather, alltoall and broadcast are gloo's own algorithms
// (gloo::allreduce is what torch's ProcessGroupGloo calls); gloo has no
// out-of-place reduce_scatter, so that is a ring over gloo's unbound
// buffers here, and sendrecv is one send and one receive. In-place alltoall
// and sendrecv run from a scratch copy (gloo cannot alias them).
#pragma once

#include <memory>

#include "benchmark/comm_backend.h"
#include "benchmark/comm_worker.h"

namespace primus::benchmark {

// The network interface: GLOO_SOCKET_IFNAME (its first entry) when set, as
// torch does; else the local address the kernel routes MASTER_ADDR from.
Result<std::unique_ptr<CommBackend>> OpenGlooBackend(const CommWorkerContext& context);

}  // namespace primus::benchmark
