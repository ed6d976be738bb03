// Builders shared by the telemetry tests: a GPU and a worker as a node
// sample holds them, with only the fields that identify them set.
#pragma once

#include <string>
#include <utility>

#include "telemetry/node_sample.h"

namespace primus::telemetry {

inline GpuStats MakeGpu(int index, std::string bus_id, std::string vendor) {
  GpuStats gpu;
  gpu.index = index;
  gpu.bus_id = std::move(bus_id);
  gpu.vendor = std::move(vendor);
  return gpu;
}

inline WorkerStats MakeWorker(int rank, int local_rank, int pid, std::string state) {
  WorkerStats worker;
  worker.rank = rank;
  worker.local_rank = local_rank;
  worker.pid = pid;
  worker.state = std::move(state);
  return worker;
}

}  // namespace primus::telemetry
