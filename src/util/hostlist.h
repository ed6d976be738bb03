// Slurm's compressed host lists, as in SLURM_JOB_NODELIST:
//   "node[01-04,07],gpu-a[1-2]"  ->  node01 node02 node03 node04 node07 gpu-a1 gpu-a2
// Commas outside brackets separate items; each bracket group is a list of
// numbers and ranges whose lower bound's width sets the zero padding; several
// groups in one item expand as a product, the first group outermost; text
// may stand between groups but not after the last one (Slurm refuses
// "n[1-2]a"). The
// result agrees with `scontrol show hostnames` (a differential test checks
// generated expressions), without needing scontrol on the node.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus {

// A malformed expression is a UsageError naming it and the position.
Result<std::vector<std::string>> ExpandHostlist(std::string_view expression);

}  // namespace primus
