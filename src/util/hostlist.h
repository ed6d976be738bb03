// Slurm's compressed host lists, as in SLURM_JOB_NODELIST:
//   "node[01-04,07],gpu-a[1-2]"  ->  node01 node02 node03 node04 node07 gpu-a1 gpu-a2
// Commas outside brackets separate items; each bracket group is a list of
// numbers and ranges whose lower bound's width sets the zero padding; several
// groups in one item expand as a product, the first group outermost; text
// may stand between groups but not after the last one (Slurm refuses
// "n[1-2]a"). The result agrees with `scontrol show hostnames` (a
// differential test checks generated expressions), without needing scontrol
// on the node.
//
// A short expression can name a huge product ("a[0-9][0-9][0-9][0-9][0-9]
// [0-9][0-9][0-9]" is 10^8 hosts), so the list is parsed once into ranges:
// counting hosts and reading one host cost time linear in the expression,
// never in the hosts. Only ExpandHostlist writes every name, and it refuses
// more than kMaxExpandedHosts of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus {

// Far above the largest cluster; 100,000 names are a few megabytes.
inline constexpr uint64_t kMaxExpandedHosts = 100000;

class Hostlist {
 public:
  // A malformed expression is a UsageError naming it and the position.
  static Result<Hostlist> Parse(std::string_view expression);

  // How many hosts the list names (saturating at UINT64_MAX).
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The host at `index` (0-based, index < size()), in scontrol's order.
  std::string Host(uint64_t index) const;
  // Every host, in order. Only for a size() the caller has bounded.
  std::vector<std::string> All() const;

 private:
  struct Range {
    uint64_t from = 0, to = 0;
    size_t width = 0;  // zero padding
  };
  struct Group {
    std::vector<Range> ranges;
    std::vector<uint64_t> starts;  // index of each range's first value in the group
    uint64_t size = 0;
  };
  // literals[i] stands before groups[i]; literals has one more entry.
  struct Item {
    std::vector<std::string> literals;
    std::vector<Group> groups;
    uint64_t size = 0;
  };

  static std::string ItemHost(const Item& item, uint64_t index);

  std::vector<Item> items_;
  uint64_t size_ = 0;
};

// Every host, in order; a UsageError for a malformed list or one of more
// than kMaxExpandedHosts hosts.
Result<std::vector<std::string>> ExpandHostlist(std::string_view expression);

// The first host without expanding the rest; a UsageError for a malformed
// or empty list.
Result<std::string> FirstHost(std::string_view expression);

}  // namespace primus
