// `benchmark rccl` and `benchmark strided-allgather`: the command lines of
// Primus's collective benchmarks of those names, read with their meaning and
// run as `benchmark comm` (NCCL/RCCL on GPUs, gloo on CPUs). The translation
// is shown by --dry-run; what cannot be translated is a usage error naming
// our equivalent.
//
// rccl: --op OP [OP ...] (all_reduce broadcast reduce_scatter all_gather
// alltoall), --sizes 1K,2K,... or --min-bytes/--max-bytes (1K..128M) with
// --scale log2 (doubling; default) or linear (--num-sizes 12 evenly spaced),
// --dtype bf16|fp16|fp32 (default bf16), --warmup 20, --iters 100, --check
// (results are checked only when asked, as there), --output-file FILE
// (report_file.h), --append, --cluster LABEL (a line of the report). Not
// here: --repeat above 1, --aggregate-repeat, --per-rank, --per-rank-file,
// --per-iter-trace and the --trace-* filters.
//
// strided-allgather: --sizes-mb 64,128,256 (per rank), --stride 8 (groups
// of ranks r, r+8, r+16 ...: with 8 GPUs per node, the same GPU of every
// node), --parallel (every group at once; default: one group after the
// other), --iters 50, --warmup 10, --dtype bf16, --backend nccl|gloo (the
// library follows the device: gloo is --device cpu).
#pragma once

#include <string>
#include <vector>

#include "util/error.h"
#include "util/option_parser.h"

namespace primus::benchmark {

struct CollectiveTranslation {
  std::vector<std::string> comm_args;  // for `benchmark comm`
  std::string output_file;             // "" none
  bool append = false;
  std::string cluster;                 // --cluster LABEL for the report
};

const std::vector<OptionSpec>& RcclOptions();
const std::vector<OptionSpec>& StridedAllgatherOptions();

// args: after "rccl" / "strided-allgather".
Result<CollectiveTranslation> TranslateRccl(const std::vector<std::string>& args);
Result<CollectiveTranslation> TranslateStridedAllgather(const std::vector<std::string>& args);

}  // namespace primus::benchmark
