// `benchmark comm --stride N` (Primus's strided all-gather): the ranks split
// into N groups of every Nth rank, group g being ranks g, g+N, g+2N ... With
// N GPUs per node that is the same GPU of every node, the traffic that
// crosses nodes. Each group runs the collectives among its own ranks.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::benchmark {

struct RankGroup {
  int index = 0;             // g
  int count = 1;             // N
  int rank = 0;              // the position in the group (r / N)
  int size = 1;              // world size / N
  std::vector<int> members;  // the global ranks, in group order
};

// A usage error when N does not divide the world size.
Result<RankGroup> StridedGroup(int rank, int world_size, int stride);

// "0,8,16,24"
std::string MemberList(const RankGroup& group);

}  // namespace primus::benchmark
