// One line of a training log, taken apart: when it was written, which rank
// wrote it, and the text. Understands the stamps primus-cli writes (rank log
// files: "2026-11-24T09:19:28.495496 O text"; its own console:
// "[2026-11-24 09:19:31.580] [host] [ERROR] text"), Python logging's
// "2026-11-24 09:19:31,580 ...", and the console prefix "[host:rank] text" of
// interleaved output (a Slurm job's .out file).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace primus::analyze {

struct LogLine {
  double time = 0;         // seconds since the epoch (local time as written); 0 when the line has none
  std::string_view text;   // the line without its stamp and prefix
  std::string_view host;   // from a "[host:rank] " prefix, else empty
  int rank = -1;           // from that prefix or a leading "rank N:", else -1
};

// Parses lines; keeps a cache of the local-time conversion per hour, so a
// million lines cost one mktime per hour of log.
class LogLineParser {
 public:
  LogLine Parse(std::string_view raw);

 private:
  double HourStart(std::string_view date_hour);  // "2026-11-24T09" or "2026-11-24 09"
  std::unordered_map<std::string, double> hours_;
};

}  // namespace primus::analyze
