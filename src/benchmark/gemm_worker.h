// One rank of `benchmark gemm`, as the node agent starts it inside
// primus-cli (`primus-cli benchmark worker gemm --result-dir DIR --engine
// cpu|nvidia|amd -- <the user's gemm arguments>`): opens its engine on the
// device of its LOCAL_RANK, waits until every local rank is ready (so all
// GPUs of a node are measured at the same time, as in a training step),
// runs every planned shape and writes DIR/rank<RANK>.json. A failed check is
// a result, not a failure: the launching task reports it and sets the exit
// status, so one bad GPU does not cut the others' measurements short.
#pragma once

#include <string>
#include <vector>

#include "benchmark/gemm_result.h"
#include "util/error.h"

namespace primus::benchmark {

// Builds the worker's argument list (after "benchmark worker gemm").
std::vector<std::string> GemmWorkerArgs(const std::string& result_dir, const std::string& engine,
                                        const std::vector<std::string>& user_args);

// Where local rank 0 writes its progress (benchmark/progress_file.h).
std::string GemmProgressFile(const std::string& result_dir);

// Returns the process exit status.
int RunGemmWorker(const std::vector<std::string>& args);

// Every rank*.json in `dir`, in rank order.
Result<std::vector<GemmResult>> ReadGemmResults(const std::string& dir);

}  // namespace primus::benchmark
