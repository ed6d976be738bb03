#include "agent/console_filter.h"

#include <algorithm>

namespace primus::agent {
namespace {

bool Listed(const std::vector<int>& filter, int rank) {
  return filter.empty() || std::find(filter.begin(), filter.end(), rank) != filter.end();
}

}  // namespace

bool OnConsole(const LaunchSpec& spec, int rank, int local_rank, int stream) {
  if (!Listed(spec.ranks_filter, rank) || !Listed(spec.local_ranks_filter, local_rank)) return false;
  bool redirected = (spec.redirects.For(local_rank) & stream) != 0;
  bool teed = (spec.tee.For(local_rank) & stream) != 0;
  return !redirected || teed;
}

}  // namespace primus::agent
