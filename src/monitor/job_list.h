// The jobs of this user that this host can find, for `ps`, `history`,
// `stop`, `logs` and for the job a command means when it names none
// (docs/jobs.md). A job is found by its view, <log_dir>/telemetry/job.json,
// which node 0's agent rewrites at every sample: under the agent's default
// log directories (${TMPDIR:-/tmp}/primus-<uid>/<run id>) and under
// ./output/<experiment>/logs. A view another user owns is never listed: a
// shared ./output may hold theirs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "monitor/job_source.h"
#include "util/error.h"

namespace primus::monitor {

struct JobEntry {
  std::string view_file;  // <log_dir>/telemetry/job.json
  std::string log_dir;
  std::string run_id;
  // The view's state; "ended without a record" when its agent is gone, and
  // "gone" when the view stopped being rewritten without an end (an agent
  // on another host, or killed): neither is running.
  std::string state;
  bool running = false;
  std::string experiment, command, cwd;
  int nnodes = 1, world_size = 1, restarts = 0;
  double started = 0;  // seconds since the epoch; 0 when the view does not say
  double updated = 0;  // the view's last write
  std::optional<int64_t> step, total_steps;
  std::optional<double> eta_s, loss;
  std::string agent_host;  // node 0's agent
  std::vector<std::string> hosts;  // every node's host, by node rank, as the view has them
  pid_t agent_pid = 0;
  nlohmann::json agent_stamp;  // util/process_stamp.h, as the view has it

  // What the job runs, for a table: the experiment, else the workers' command.
  std::string What() const;
  nlohmann::json ToJson() const;
};

// Whether a view's job (its "job" object; the file last written at
// `modified`) is running: its state is not an ended one and the view is
// still rewritten, within 10 sampling intervals and at least a minute (an
// agent that died on another host says nothing).
bool IsRunningView(const nlohmann::json& job, double modified, double now);

// Every job found under `places`, newest first (by start, else last write).
// `now`: seconds since the epoch.
std::vector<JobEntry> ListJobs(const SearchPlaces& places, double now);

// The job a command means when it names none: this user's running job, the
// one started in `cwd` when several run (`here_only`: only one started in
// `cwd`, for stop); `or_latest`: when none runs, the latest one started in
// `cwd` (logs), else the latest at all. A UsageError listing the candidates
// when several running jobs fit, naming what to type; an UnavailableError
// when none does.
enum class JobChoice { kRunning, kRunningHere, kRunningOrLatest };
Result<JobEntry> ChooseJob(const std::vector<JobEntry>& jobs, const std::string& cwd, JobChoice choice);

// The job a command means: `target` as ResolveTarget reads it, or with none
// the one ChooseJob takes among this user's jobs (from the current directory).
Result<JobSource> ResolveJob(const std::string& target, const SearchPlaces& places, JobChoice choice);

}  // namespace primus::monitor
