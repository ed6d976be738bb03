// One rank of `benchmark comm`, as the node agent starts it: read the rank
// contract (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), meet
// the other ranks at rank 0's store (tcp_store.h), build the collective
// backend, exchange the "Using devices" lines, run the benchmark, report
// (rank 0: the nccl-tests table on stdout as rows complete, unless --json;
// the whole report as JSON in --report-file, from which the launching task
// prints --json and draws --plot), and leave together (a final store
// barrier, so rank 0's store outlives every rank's last request and no rank
// ends before rank 0's report is complete). The exit status is 1 when any
// rank found a wrong element, like nccl-tests.
//
// Worker arguments: [--report-file FILE] -- <the user's benchmark comm arguments>.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/comm_backend.h"
#include "benchmark/tcp_store.h"
#include "util/error.h"

namespace primus::benchmark {

// A rank's place in the collective and where the ranks meet (the store at
// MASTER_ADDR:MASTER_PORT), as the agent's variables give them.
struct WorkerRendezvous {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;
  std::string host;  // this host's short name
};

// From the agent's variables; an error names the missing or bad one.
Result<WorkerRendezvous> ReadWorkerRendezvous(const std::map<std::string, std::string>& env);

// How long a rank waits for the others at the store (PRIMUS_BENCHMARK_TIMEOUT, default 300 s).
double RendezvousTimeout(const std::map<std::string, std::string>& env);

struct CommWorkerContext {
  const WorkerRendezvous& env;
  StoreClient& store;
  double timeout_s;
};
using CommBackendFactory = std::function<Result<std::unique_ptr<CommBackend>>(const CommWorkerContext&)>;

std::vector<std::string> CommWorkerArgs(const std::string& report_file, const std::string& progress_file,
                                        const std::vector<std::string>& user_args);

// Returns the exit status; errors are logged with the rank.
int RunCommWorker(const std::vector<std::string>& worker_args, const CommBackendFactory& factory);

}  // namespace primus::benchmark
