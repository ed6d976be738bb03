// primus-comm-worker: one rank of `benchmark comm` on CPUs (gloo over TCP).
// The benchmark task starts it once per rank through the node agent, with
// [--report-file FILE] -- <the user's benchmark comm arguments>; it is not
// meant to be run by hand.
// A separate executable because gloo is a C++ library with a dynamic
// libstdc++, which primus-cli (glibc only at load time) must not need.
#include <string>
#include <vector>

#include "benchmark/comm_worker.h"
#include "benchmark/gloo_backend.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return primus::benchmark::RunCommWorker(args, primus::benchmark::OpenGlooBackend);
}
