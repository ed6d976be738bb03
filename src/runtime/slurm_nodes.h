// The node count a Slurm job asks for (slurm.nodes, `slurm -N`): a number,
// or a range MIN-MAX as srun and sbatch take it, in which case Slurm grants
// any count in the range and the node agents use what was granted (the
// step's SLURM_* variables). Checked here so that a typo stops before
// anything is submitted.
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"

namespace primus::runtime {

// "4" -> "4", "2-4" -> "2-4", "" and "0" -> "" (leave it to Slurm). Anything
// else, a range whose minimum exceeds its maximum, or a count above 262144,
// is an error for which `where` names the setting ("flag -N").
Result<std::string> SlurmNodeCount(std::string_view text, std::string_view where);

}  // namespace primus::runtime
