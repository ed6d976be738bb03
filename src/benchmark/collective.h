// The collectives of `benchmark comm` with nccl-tests' accounting, so that
// our numbers mean what theirs mean: per operation, how many elements each
// rank sends and receives for a given size, where the in-place buffers sit,
// and the bus-bandwidth factor (from nccl-tests' *GetCollByteCount and
// *GetBw, documented in their PERFORMANCE.md):
//
//   op              bytes counted        busbw factor   redop  root
//   all_reduce      count*size           2(n-1)/n       sum    -1
//   all_gather      count*size*n         (n-1)/n        none   -1
//   reduce_scatter  count*size*n         (n-1)/n        sum    -1
//   alltoall        count*size*n         (n-1)/n        none   -1
//   broadcast       count*size           1              none   root
//   sendrecv        count*size           1              sum    -1
//
// where count is the per-rank element count nccl-tests prints.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace primus::benchmark {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAlltoAll, kBroadcast, kSendRecv };

const std::vector<Collective>& AllCollectives();
std::string_view CollectiveName(Collective op);     // "allreduce" (our --op spelling)
std::string_view ProgramName(Collective op);        // "all_reduce_perf" (nccl-tests' binary)
std::optional<Collective> ParseCollective(std::string_view text);  // allreduce, all_reduce, all-reduce, ...
bool Reduces(Collective op);                        // data are summed, not copied
// nccl-tests reports "N/A" for in-place alltoall and sendrecv: not checked.
bool InPlaceChecked(Collective op);
std::string_view RedopName(Collective op);          // "sum" or "none"
bool HasRoot(Collective op);

struct CollectiveCounts {
  size_t send_count = 0;           // elements each rank sends
  size_t recv_count = 0;           // elements each rank receives (its result)
  size_t param_count = 0;          // the "count" column and the library call's count
  size_t send_inplace_offset = 0;  // in-place: send buffer = recv buffer + offset * rank
  size_t recv_inplace_offset = 0;  // in-place: recv buffer = recv buffer + offset * rank
};

// For `count` elements of the row's size (size / element size) among `nranks`.
CollectiveCounts CountsFor(Collective op, size_t count, int nranks);

struct Bandwidth {
  double algbw = 0;  // GB/s (1e9)
  double busbw = 0;
};
Bandwidth BandwidthFor(Collective op, size_t param_count, int element_size, double seconds, int nranks);
double BusFactor(Collective op, int nranks);

}  // namespace primus::benchmark
