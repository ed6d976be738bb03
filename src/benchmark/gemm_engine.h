// The interface every GEMM implementation of the benchmark offers (OpenBLAS
// on the CPU, cuBLASLt and hipBLASLt on GPUs) and the settings of one run.
// An engine owns its library handles and its device; Run measures one shape:
// warm-up, timed iterations over rotating buffer sets, then a check of the
// result against the exact product.
#pragma once

#include <string>

#include "benchmark/gemm_problem.h"
#include "benchmark/gemm_result.h"
#include "util/error.h"

namespace primus::benchmark {

struct GemmRunOptions {
  int iters = 10;          // 0 with duration_s > 0: as many as fit
  double duration_s = 0;
  int warmup = 2;
  bool tune = false;
  uint64_t seed = 1;
};

class GemmEngine {
 public:
  virtual ~GemmEngine() = default;
  // `requested` is what the user asked; the result says what was used.
  virtual Result<GemmResult> Run(const GemmShape& shape, GemmDtype requested, const GemmRunOptions& settings) = 0;
};

// Iterations for a time box: enough to fill `duration_s` at `seconds_per_iteration`, at least 1.
int IterationsFor(double duration_s, double seconds_per_iteration);

}  // namespace primus::benchmark
