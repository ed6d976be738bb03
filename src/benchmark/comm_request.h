// The command line of `benchmark comm`, with nccl-tests' flags and defaults
// (-b/-e 32M, -f 1 with -i 1M steps, -n 20, -w 5, -c 1, -d float) so that a
// user's usual invocation (`-b 8 -e 128M -f 2`) means the same here, plus
// --op (which collectives: one, a comma list, or all), --sizes (a list of
// row sizes instead of a range), --json, --plot and --device.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "benchmark/collective.h"
#include "benchmark/comm_data.h"
#include "benchmark/gemm_request.h"
#include "util/error.h"
#include "util/option_parser.h"

namespace primus::benchmark {

struct CommRequest {
  std::vector<Collective> ops = {Collective::kAllReduce};
  size_t min_bytes = 32 << 20;
  size_t max_bytes = 32 << 20;
  size_t step_factor = 1;        // > 1: multiply; else add step_bytes
  size_t step_bytes = 1 << 20;
  std::vector<size_t> sizes;     // --sizes: exactly these rows (then -b/-e/-f/-i are not given)
  int iters = 20;
  int warmup = 5;
  int check = 1;                 // data-check iterations per row; 0: off (#wrong shows N/A)
  DataType type = DataType::kFloat;
  int root = 0;
  int stride = 0;                // --stride N: N groups of ranks r, r+N, ... each running on its own; 0: one group
  bool parallel_groups = false;  // --parallel-groups: the groups at once (default: one after the other)
  bool json = false;
  std::string plot;
  std::string output_file;  // --output FILE: the results as a file too, the format by its extension (report_file.h)
  bool append = false;
  DeviceChoice device = DeviceChoice::kAuto;
};

const std::vector<OptionSpec>& CommOptions();
// args: the task arguments after "comm".
Result<CommRequest> ParseCommRequest(const std::vector<std::string>& args);

// nccl-tests' size syntax: a number with an optional K, M or G (powers of 1024).
std::optional<size_t> ParseByteSize(std::string_view text);

// The row sizes: --sizes, else min, then *factor (or +step) while <= max.
std::vector<size_t> RowSizes(const CommRequest& request);

}  // namespace primus::benchmark
