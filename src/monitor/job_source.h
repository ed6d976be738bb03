// Where `primus-cli monitor` reads a job's view (docs/monitor.md): node 0's
// agent writes <log_dir>/telemetry/job.json at every sample and serves the
// same JSON at http://HOST:PORT/job.json with --metrics-port. A TARGET names
// one of them: an experiment directory, a log directory, the job.json file,
// a run id (the agent's default log directory, or an experiment under
// ./output whose view names that run), a Slurm job id (the experiment
// directory `slurm sbatch` made, ./output/<name>_<id>), or host:port. With no
// TARGET, monitor/job_list.h chooses among this user's jobs.
//
// Every failure is an UnavailableError (exit 4) naming each place looked at.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/http_client.h"
#include "util/error.h"

namespace primus::monitor {

struct JobSource {
  bool http = false;
  std::string file;               // a job.json on this host (http = false)
  io::HttpEndpoint endpoint;   // the metrics port (http = true)

  // The file's path, or http://host:port/job.json.
  std::string Describe() const;
};

// Where jobs on this host leave their views.
struct SearchPlaces {
  std::string runs_dir;    // the agent's default log directories: ${TMPDIR:-/tmp}/primus-<uid>
  std::string output_dir;  // experiment directories: ./output

  static SearchPlaces FromEnvironment();
};

Result<JobSource> ResolveTarget(const std::string& target, const SearchPlaces& places);

// Every job view under `places` (the agent's log directories, then the
// experiments'), whoever wrote it.
std::vector<std::string> JobViewFiles(const SearchPlaces& places);
// An UnavailableError: `what`, and the places looked at.
Error NoJobFound(const std::string& what, const SearchPlaces& places);

// The view's text as read (the file, or the body of GET /job.json).
Result<std::string> ReadJobViewText(const JobSource& source, double timeout_s);

// ReadJobViewText, then ParseJobView: the view, whose errors name the source.
Result<nlohmann::json> ReadJobView(const JobSource& source, double timeout_s);

// The text parsed and checked to be a job view ("format":
// "primus-job-telemetry/1"); `where` names it in errors.
Result<nlohmann::json> ParseJobView(const std::string& text, const std::string& where);

}  // namespace primus::monitor
