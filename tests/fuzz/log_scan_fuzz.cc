// Fuzz target: `analyze logs` on a log file of any content (analyze/log_scan
// with the built-in signature database): stamps, "[host:rank]" prefixes,
// signatures, first failures.
//
// Input: the log file's content, scanned as a worker's log
// (attempt_0/<host>.rank1.log) and as a file without a known place.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "analyze/log_line.h"
#include "analyze/log_scan.h"
#include "fuzz_support.h"
#include "util/files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const primus::analyze::SignatureDb db = [] {
    auto builtin = primus::analyze::SignatureDb::Builtin();
    if (!builtin.ok()) std::abort();
    return std::move(*builtin);
  }();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string path = primus::fuzz::ScratchDir() + "/fuzz.log";
  if (!primus::fuzz::WriteScratchFile(path, input)) return 0;
  std::vector<primus::analyze::LogSource> sources = {{path, "attempt_0/node1.rank1.log", "node1", 1, 0},
                                                    {path, "console.out", "", -1, -1}};
  primus::analyze::LogScan scan = primus::analyze::ScanLogs(sources, db);
  for (const auto& hit : scan.hits) {
    if (hit.signature < 0 || static_cast<size_t>(hit.signature) >= db.signatures().size()) std::abort();
  }
  primus::analyze::LogLineParser parser;
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    (void)parser.Parse(input.substr(start, end - start));
    start = end + 1;
  }
  return 0;
}
