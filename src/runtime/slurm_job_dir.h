// Where `slurm sbatch` puts a batch job's files: the job's experiment
// directory, named as `train` names the directory that all nodes of a
// multi-node job share (snapshot::OpenJobExperimentDir), so that the script,
// Slurm's log and every node's training snapshot end up in one place:
//
//   <workspace>/<name>_<job id>/sbatch.sh                  what was submitted
//   <workspace>/<name>_<job id>/logs/slurm-<job id>.out    the job's output
//
// For `train`, workspace and name are the experiment's (its workspace: and
// exp_name: keys, or the file's name; key=value arguments and --config or
// $EXP as train reads them; a --replay directory's recorded configuration).
// For any other task: ./output and the task's name (output/run_1234/). The
// workspace is made absolute, so the printed paths work from anywhere.
// The job id is known only once sbatch answers, so the job is submitted
// held, its directory made, then released (slurm.cc).
#pragma once

#include <string>

#include "util/environment.h"
#include "runtime/runtime.h"
#include "util/error.h"

namespace primus::runtime {

struct JobDirPlan {
  std::string workspace;  // absolute
  std::string name;       // file-name safe, as snapshot makes it: [A-Za-z0-9._-]

  // <workspace>/<name>_<job id>
  std::string DirFor(const std::string& job_id) const;
  // The same path with Slurm's %j for the job id, as sbatch --output reads it:
  // <workspace>/<name>_%j/logs/slurm-%j.out (a % in the workspace doubled).
  std::string LogPattern() const;
};

// A ConfigError when the train experiment cannot be read: a bad file is
// better refused at submission than after the job waited in the queue.
Result<JobDirPlan> PlanJobDir(const Invocation& invocation, const Environment& environment, const std::string& cwd);

// Creates job `job_id`'s directory (as train's nodes will join it) and writes
// `script` into it as sbatch.sh; returns the script's path.
Result<std::string> WriteJobFiles(const JobDirPlan& plan, const std::string& job_id, const std::string& script);

}  // namespace primus::runtime
