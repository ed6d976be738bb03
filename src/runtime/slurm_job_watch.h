// Follows a submitted batch job to its end, for `slurm sbatch --wait`:
// `squeue -h -j ID` every poll interval (sbatch --wait itself checks only
// every 2-10 s), with the job's log copied to stdout as it grows; then the
// exit code from `scontrol show job ID` (sacct needs accounting, which many
// clusters lack; it is the fallback once the controller forgot the job).
// SIGINT, SIGTERM or SIGHUP while following cancels this job, and only
// this one (scancel ID), and waits for it to leave the queue.
#pragma once

#include <functional>
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
  std::string log_path;    // copied to stdout while the job runs; "" = none
  double poll_s = 0.25;    // squeue interval
  // When log_path is "": the log's path from the node that runs the batch
  // script (squeue's %B, once the job runs), for an --output naming %N.
  std::function<std::string(const std::string& batch_host)> log_path_once_running;
};

// The job's exit status, or 128+N when signal N interrupted the wait (the
// job was cancelled). An Error when squeue/scontrol cannot be run or the
// exit code cannot be found anywhere.
Result<int> FollowJob(const FollowOptions& options);

}  // namespace primus::runtime
