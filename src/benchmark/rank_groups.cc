#include "benchmark/rank_groups.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace primus::benchmark {

Result<RankGroup> StridedGroup(int rank, int world_size, int stride) {
  if (stride < 1 || world_size % stride != 0) {
    return UsageError(fmt::format("--stride {} needs a world size that is a multiple of {}, and this job has {} ranks",
                                  stride, stride, world_size),
                      "give --stride a divisor of the world size (GPUs per node for the same GPU of every node)");
  }
  RankGroup group;
  group.count = stride;
  group.index = rank % stride;
  group.rank = rank / stride;
  group.size = world_size / stride;
  for (int i = 0; i < group.size; ++i) group.members.push_back(group.index + i * stride);
  return group;
}

std::string MemberList(const RankGroup& group) {
  std::vector<std::string> ranks;
  for (int member : group.members) ranks.push_back(std::to_string(member));
  return Join(ranks, ",");
}

}  // namespace primus::benchmark
