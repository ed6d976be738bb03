// PRIMUS_JOB_TOKEN: the secret that every node agent of one job shares, so
// that node 0's control channel can refuse peers from another job. The
// launching side creates it (here: `slurm srun` and `slurm sbatch`; the token
// itself is util/random.h's NewJobToken) and hands it to srun/sbatch through their environment only;
// it is never written to a file or printed.
#pragma once

#include <map>
#include <string>

#include "util/error.h"

namespace primus::runtime {

inline constexpr char kJobTokenVariable[] = "PRIMUS_JOB_TOKEN";

// The variable to add to srun's/sbatch's environment: a new token, or
// nothing when `environment` already has one (the user's wins: agents
// started by hand must be able to join with the same token).
Result<std::map<std::string, std::string>> JobTokenEnvironment(const std::map<std::string, std::string>& environment);

}  // namespace primus::runtime
