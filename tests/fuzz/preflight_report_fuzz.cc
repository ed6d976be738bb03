// Fuzz target: another node's preflight report, as node 0 reads it from the
// exchange (preflight::ReportFromJson, then each check): a string node rank,
// nulls, deep nesting, terminal codes in names. No report may end node 0.
//
// Input: the report line (JSON).
#include <cstddef>
#include <cstdint>
#include <string>

#include "preflight/check_result.h"
#include "preflight/node_exchange.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string line(reinterpret_cast<const char*>(data), size);
  auto report = primus::preflight::ReportFromJson(line);
  if (report.ok()) {
    (void)primus::preflight::Worst(report->results);
    (void)primus::preflight::ReportToJson(*report);
  }
  return 0;
}
