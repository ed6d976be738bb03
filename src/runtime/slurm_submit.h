// Submitting batch jobs, for `slurm sbatch` and for a batch job that
// continues as a new one.
//
// Every job is submitted held (sbatch --parsable --hold, the script on
// stdin), its files written, then released: Slurm opens the job's log in
// its directory the moment it starts, so the directory must exist first.
//
// The continuation (direct.exclude_bad_nodes, docs/agent.md "Bad nodes"): a
// batch job found a node bad and its allocation has no spare to run again
// without it. Slurm cannot change a running job's ExcNodeList (scontrol
// update answers "Job is no longer pending execution") and a requeued job
// may get the same node again, so the job submits its own script again,
// with --exclude naming every bad node, and ends. The new job is the same
// job to primus-cli:
//   - its directory is the first job's, <workspace>/<name>_<first id>/: its
//     script there as sbatch-<new id>.sh, Slurm's log in logs/ beside the
//     first job's, and (PRIMUS_JOB_ID, unless you set your own) train's
//     checkpoints, metrics and snapshots where the first job left them;
//   - its restarts go on counting (PRIMUS_SCHEDULER_RESTARTS) against
//     direct.max_restarts;
//   - the line "<job> -> <new job> without <hosts>" in the directory's
//     continuations.txt lets `sbatch --wait` follow it to its end.
// Only a job `slurm sbatch` submitted continues: its script holds every
// sbatch flag as a directive (a script of your own may have had flags on
// sbatch's command line that a resubmission would lose). An array task
// never does (it would submit the whole array again).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/slurm_job_dir.h"
#include "util/environment.h"
#include "util/error.h"

namespace primus::runtime {

// sbatch --parsable --hold with `script` on stdin and `env` set on top of
// this process's environment (nullopt unsets); the job id.
Result<std::string> SubmitHeldBatchJob(const std::string& script,
                                       const std::map<std::string, std::optional<std::string>>& env);
// scontrol release ID.
Status ReleaseBatchJob(const std::string& job_id);

// The variable that carries the first job's id to its continuations.
inline constexpr const char* kFirstJobVariable = "PRIMUS_FIRST_JOB_ID";

// A batch job that can continue as a new one.
struct BatchContinuation {
  std::string job_id;        // this job (SLURM_JOB_ID)
  std::string first_job_id;  // the job it continues ($PRIMUS_FIRST_JOB_ID), else job_id
  std::string job_dir;       // JobDirPlan::DirFor(first_job_id)
  std::string script_path;   // this job's script there: sbatch-<job id>.sh, or sbatch.sh for the first
  std::string own_log_pattern;  // slurm sbatch's --output pattern (JobDirPlan::LogPattern)
  std::string log_pattern_in_dir;  // the same, kept in job_dir: <job_dir>/logs/slurm-%j.out
};

// This batch job's continuation, when it can have one; otherwise why not
// (an Error, for the log: not a batch job slurm sbatch submitted, an array
// task). `environment`: this process's.
Result<BatchContinuation> FindBatchContinuation(const JobDirPlan& plan, const Environment& environment);

// The continuation's script: `script` (this job's) with --exclude naming
// its own excluded hosts and `excluded`, its --nodelist without them, no
// --dependency (this job's was met), slurm sbatch's own --output kept in the
// job's directory, and comment lines saying what it continues and why.
Result<std::string> ContinuationScript(std::string_view script, const BatchContinuation& continuation,
                                       const std::vector<std::string>& excluded, int restarts);

// Submits the continuation without `excluded` as restart `restarts`: held,
// its script written, the line added to continuations.txt, released. The
// new job's id. `environment`: this process's, passed on without Slurm's
// SLURM_* variables of this job (SLURM_CONF kept).
Result<std::string> SubmitContinuation(const BatchContinuation& continuation, const std::vector<std::string>& excluded,
                                       int restarts, const Environment& environment);

// The job that continues `job_id`, from `job_dir`'s continuations.txt
// (read bounded; a line that is not "<id> -> <id> without <hosts>" is
// skipped); nullopt when none does.
std::optional<std::string> ContinuingJob(const std::string& job_dir, const std::string& job_id);

}  // namespace primus::runtime
