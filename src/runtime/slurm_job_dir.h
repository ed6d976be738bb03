// Where `slurm sbatch` puts a batch job's files: an experiment directory
// named like every other (snapshot/experiment_dir.h),
//
//   <workspace>/<name>_<YYYYmmdd_HHMMSS>/sbatch.sh
//   <workspace>/<name>_<YYYYmmdd_HHMMSS>/logs/slurm-<job id>.out
//
// For `train`, workspace and name are the experiment's (its workspace: and
// exp_name: keys, or the file's name; key=value arguments and --config or
// $EXP as train reads them; a --replay directory's recorded configuration).
// For any other task: ./output and the task's name, e.g.
// output/run_20261122_101500/. The path is absolute, so the log path printed
// at submission is usable from anywhere.
#pragma once

#include <string>

#include "config/environment.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace primus::runtime {

struct JobDirPlan {
  std::string workspace;  // absolute
  std::string name;       // the part before _<time>
};

// A ConfigError when the train experiment cannot be read: a bad file is
// better refused at submission than after the job waited in the queue.
Result<JobDirPlan> PlanJobDir(const Launch& launch, const config::Environment& environment, const std::string& cwd);

}  // namespace primus::runtime
