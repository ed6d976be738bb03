// The nccl-tests procedure, once per collective, for any CommBackend:
// warm-up at the largest and the smallest size, then for every row size and
// both modes (out-of-place, in-place): fill the inputs, one synchronising
// collective, -n timed iterations whose buffers shift through the
// allocation (as nccl-tests does, against cache effects), the wall time per
// iteration, then -c checked runs against the expected values. After each
// row the ranks exchange their times and wrong counts: the time shown is the
// mean over ranks (nccl-tests' default -a 1), #wrong the sum, and every
// rank's own total is kept to name the slowest rank at the end.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "benchmark/comm_backend.h"
#include "benchmark/comm_request.h"
#include "benchmark/nccl_tests_format.h"
#include "util/error.h"

namespace primus::benchmark {

struct CommRunRequest {
  int rank = 0;
  int nranks = 1;
  std::string backend;          // CommBackend::Describe(), for the header
  std::vector<RankLine> ranks;  // every rank's device line (rank 0 prints them)
  int corrupt_rank = -1;        // test hook: this rank alters one element of every result it checks
  std::ostream* out = nullptr;  // rank 0 in table mode: the nccl-tests text, row by row; else nullptr
  // Called before each row (rows done so far, rows in all, what comes next)
  // and once at the end; rank 0 shows progress with it.
  std::function<void(long done, long total, const std::string& detail)> progress;
};

Result<std::vector<CommSection>> RunCommBenchmark(CommBackend& backend, const CommRequest& request,
                                                  const CommRunRequest& context);

}  // namespace primus::benchmark
