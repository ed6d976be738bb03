// Reads the error file a worker leaves at TORCHELASTIC_ERROR_FILE, in the
// format of PyTorch's @record (torch.distributed.elastic.multiprocessing.errors):
//   {"message": {"message": "ValueError: boom",
//                "extraInfo": {"py_callstack": "Traceback ...", "timestamp": "1700000000"}}}
// or the older/newer flat {"message": "text"}. Its timestamp decides the root
// cause when several workers fail.
#pragma once

#include <optional>
#include <string>

namespace primus::agent {

struct ErrorFileReport {
  std::string message;
  std::string traceback;
  std::optional<double> timestamp;  // seconds since the epoch
};

// nullopt when the file does not exist or is empty; a file that is not the
// expected JSON still yields a report whose message quotes its start.
std::optional<ErrorFileReport> ReadErrorFile(const std::string& path);

}  // namespace primus::agent
