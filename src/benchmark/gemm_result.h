// What one GEMM measurement found, on one device: the problem, the library
// and device that ran it, the dtype really used (the CPU path runs fp32 when
// bf16 is asked), the timing over rotated buffers, the derived rates and the
// result check. Workers write these as JSON (one file per rank); the task
// that launched them reads them back and prints the report.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmark/gemm_data.h"
#include "benchmark/gemm_problem.h"
#include "util/error.h"

namespace primus::benchmark {

struct GemmTiming {
  int iterations = 0;
  double mean_ms = 0, min_ms = 0, median_ms = 0, max_ms = 0;
};
// Summary statistics of per-iteration times in milliseconds.
GemmTiming SummarizeTimes(std::vector<double> times_ms);

// One algorithm tried by --tune.
struct GemmCandidate {
  int index = 0;       // position in the library's heuristic list
  double mean_ms = 0;  // over the short tuning run
};

struct GemmResult {
  int rank = 0;
  int local_rank = 0;
  std::string host;
  std::string device;     // "cpu (Intel Xeon ...)" or the GPU's name
  std::string device_id;  // the GPU's PCI bus id, "" on CPU
  std::string library;    // "OpenBLAS 0.3.21 ...", "cuBLASLt 13.1.0"

  GemmShape shape;
  std::string dtype_requested;
  std::string dtype_used;
  std::string note;  // why they differ, or other caveats of this run
  int rotation_sets = 0;
  int64_t rotation_bytes = 0;  // bytes of operand buffers cycled through

  GemmTiming timing;
  double tflops = 0;
  double peak_tflops = 0;      // 0: no known peak for this device and dtype
  double percent_of_peak = 0;  // 0 when the peak is unknown
  double bandwidth_gbs = 0;    // GemmMinimumBytes / mean time
  double arithmetic_intensity = 0;
  std::string algorithm;       // "heuristic #0 of 1", "tuned: #3 of 16"
  std::vector<GemmCandidate> candidates;
  GemmCheck check;
};

nlohmann::ordered_json GemmResultToJson(const GemmResult& result);
Result<GemmResult> GemmResultFromJson(const nlohmann::json& json);

// Fills the rates of `result` from its shape, dtype_used and timing.
void DeriveRates(GemmDtype used, GemmResult* result);

}  // namespace primus::benchmark
