// The steps of one `train` launch, in the order TrainTask::Run takes them
// (tasks/train.cc). Each step reads and fills one TrainLaunch, so Run reads as
// the story of a launch and each step can be read on its own. Every step
// returns an error as a value; from OpenExperimentDir on, Run records each
// failure in metadata.json through RecordFailure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/launch_spec.h"
#include "config/launcher_config.h"
#include "hooks/hook_runner.h"
#include "io/unique_fd.h"
#include "snapshot/experiment_dir.h"
#include "snapshot/metadata.h"
#include "snapshot/snapshot_files.h"
#include "tasks/task.h"
#include "tasks/task_scripts.h"
#include "tasks/worker_launch.h"
#include "train/backends.h"
#include "train/experiment.h"
#include "train/primus_experiment.h"
#include "train/primus_install.h"
#include "train/replay.h"
#include "util/error.h"

namespace primus::tasks {

// `train pretrain|posttrain ...` as parsed.
struct TrainRequest {
  std::string subtask;
  std::string config;
  std::string backend;
  std::string replay;
  std::string resume;
  bool force = false;
  bool no_preflight = false;
  bool full_preflight = false;  // --preflight full: every node's preflight as a gate
  std::vector<std::string> overrides;   // a.b=c
  std::vector<std::string> extra_args;  // everything else, for the backend
  std::vector<std::string> rest;        // both, in order: a Primus-format experiment's overrides, verbatim
};

// Everything one launch has learnt so far.
struct TrainLaunch {
  TrainRequest args;
  std::map<std::string, std::string> process_env;
  // The launcher's configuration with the experiment's launch settings in it.
  std::optional<config::LauncherConfig> launcher;

  std::optional<train::ReplaySource> replay;
  std::vector<train::ReplayRisk> replay_risks;  // what the replay sets that changes which code runs (train/replay.h)
  train::ExperimentRequest request;
  train::ExperimentConfig experiment;
  std::optional<train::PrimusInstall> primus;
  std::optional<train::PrimusExperiment> primus_experiment;
  train::PrimusLayout primus_layout;

  WorkerLaunch workers;  // the layout and worker environment (tasks/worker_launch.h)
  int world_size = 0;
  std::vector<std::string> backend_args;  // after --config: ours minus overrides, or Primus's everything
  TaskScripts scripts;  // --patch, then the hooks (tasks/task_scripts.h)
  std::vector<std::string> script_origins;  // where each of scripts.InOrder() came from (a replay: the recorded path)
  bool run_preflight = false;
  std::string job_id;  // PRIMUS_JOB_ID, or the scheduler's; "" when neither

  snapshot::ExperimentDir dir;
  io::UniqueFd launch_log;  // logs/launch.log, which the launcher's log lines are copied to
  std::string log_dir;      // the run's own log directory: logs/, or a fresh one inside it (agent/launch_plan.h)
  std::string shared_root;  // the job's directory every node shares (the node's own without a job id)
  snapshot::RunMetadata metadata;
  snapshot::EnvWithOrigins origins;     // worker variables set by the plan, a replay or a hook
  snapshot::EnvWithOrigins worker_env;  // env/: everything a worker starts with
  train::BackendCommand command;
};

// Loads the experiment (or the replayed one) and learns its secrets.
Status LoadRequestedExperiment(TrainLaunch* launch);
// A Primus-format experiment: finds the Primus installation and reads the file for it.
Status ResolvePrimus(TrainLaunch* launch, const config::LauncherConfig& launcher);
// The launcher's configuration with the experiment's launch settings as its layer.
Status ApplyExperimentLaunchSettings(TrainLaunch* launch, const config::LauncherConfig& launcher);
// The agent's launch spec, the worker environment plan and the world size, checked against the experiment.
Status BuildLaunchSpec(TrainLaunch* launch);
// Hooks and patches, found now so that a bad one fails before anything is created.
Status FindScripts(TrainLaunch* launch);
// --dry-run: the resolved launch, printed; nothing runs.
Result<int> PrintDryRun(const TrainLaunch& launch);
// --replay: what the recorded run sets that changes which code runs here runs
// only with --force (train/replay.h ReplayRisks).
Status CheckReplayTrust(const TrainLaunch& launch);
// The fast preflight checks: a doomed job stops here, before its directory exists.
Status RunPreflight(const TrainLaunch& launch);
// The experiment directory (the job's, or a new one) with metadata.json "running".
Status OpenExperimentDir(TrainLaunch* launch, const TaskContext& context);
// system_info.json (compared with the recorded run under --replay) and config/.
Status WriteSnapshot(TrainLaunch* launch);
// Patches and hooks; their env. lines join the worker environment.
Status RunHooks(TrainLaunch* launch);
// The backend's worker command, its files and variables, and env/.
Status BuildWorkerCommand(TrainLaunch* launch);
// The node agent runs the workers, with the progress line when the backend writes metrics.
Result<agent::RunResult> Launch(TrainLaunch* launch);
// metadata.json with the end, exit status, restarts and root cause; returns the exit code
// (tasks/worker_launch.h WorkerLaunchExitCode: direct.failure_exit_code applies).
int RecordOutcome(TrainLaunch* launch, const agent::RunResult& result);
// metadata.json "failed" with the launcher's error; returns that error.
Error RecordFailure(TrainLaunch* launch, const Error& error);

}  // namespace primus::tasks
