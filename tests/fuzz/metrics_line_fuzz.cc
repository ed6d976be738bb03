// Fuzz target: a worker's metrics lines (PRIMUS_METRICS_FILE, a trainer's
// metrics.jsonl), read the way telemetry, train's progress and `analyze run`
// read them (telemetry::ParseMetricsLine, train::ParseMetricsLine). A worker
// writes what it likes: no line may end the launcher.
//
// Input: lines.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "telemetry/node_sample.h"
#include "train/progress.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  primus::train::ProgressSnapshot snapshot;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string line(input.substr(start, end - start));
    start = end + 1;
    if (auto metrics = primus::telemetry::ParseMetricsLine(line)) {
      (void)metrics->step.value_or(0);
      (void)metrics->loss.value_or(0.0);
    }
    if (primus::train::ParseMetricsLine(line, &snapshot)) {
      (void)primus::train::FormatProgress(snapshot, 100);
    }
  }
  return 0;
}
