// Follows a submitted batch job to its end, for `slurm sbatch --wait`:
// `squeue -h -j ID` every poll interval (sbatch --wait itself checks only
// every 2-10 s), with the job's log copied to stdout as it grows; then the
// exit code from `scontrol show job ID` (sacct needs accounting, which many
// clusters lack; it is the fallback once the controller forgot the job).
// A job that went on as a new one (its continuation) is followed on to the
// end of the last. SIGINT, SIGTERM or SIGHUP while following cancels this
// job, and only this one (scancel ID; and a continuation it submitted), and
// waits for it to leave the queue.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace primus::runtime {

// How a job ended, as Slurm reports it: JobState= and ExitCode=CODE:SIGNAL.
struct JobEnd {
  std::string state;  // COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  int exit_code = 0;
  int signal = 0;
};

// From `scontrol show job ID` text; an Error when either field is missing.
Result<JobEnd> ParseScontrolJob(std::string_view text);
// From `sacct -n -X -P -o State,ExitCode -j ID` text ("FAILED|7:0").
Result<JobEnd> ParseSacctLine(std::string_view text);

// Whether a job in this state has ended for good (COMPLETED, FAILED,
// CANCELLED, TIMEOUT, ...); PENDING, RUNNING, COMPLETING, REQUEUED ... have not.
bool IsFinalJobState(std::string_view state);

// The status primus-cli returns: 128+signal, else the exit code; a job that
// did not complete but reports 0 (cancelled while pending, node failure)
// returns 1.
int JobExitStatus(const JobEnd& end);

struct FollowOptions {
  std::string job_id;
  double poll_s = 0.25;    // squeue interval
  // The path of a job's log, copied to stdout while the job runs: asked with
  // the job's id and batch_host "" at the start, and, when that gave "",
  // again with the node that runs its batch script (squeue's %B) once it
  // runs, for an --output naming %N. "" = none. Unset: no log is copied.
  std::function<std::string(const std::string& job_id, const std::string& batch_host)> log_path;
  // The job that continues one that ended (slurm_submit.h): followed in
  // turn, its log too. Unset, or nullopt: the wait ends with that job.
  std::function<std::optional<std::string>(const std::string& job_id)> continued_as;
};

// The exit status of the last job followed (a continuation's, when the job
// went on as one), or 128+N when signal N interrupted the wait (the job, and
// a continuation it had already submitted, are cancelled). An Error when
// squeue/scontrol cannot be run or the exit code cannot be found anywhere.
Result<int> FollowJob(const FollowOptions& options);

}  // namespace primus::runtime
