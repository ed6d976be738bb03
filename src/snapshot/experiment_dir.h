// The experiment directory of one launch:
//   <workspace>/<exp_name>_<YYYYmmdd_HHMMSS>/{env,config,logs}/ + metadata.json
// Created with mkdir, which fails on an existing directory, so two launches
// in the same second (or on shared storage) never share or overwrite one:
// the second gets a "_2" suffix. Every directory is ours alone
// (util/private_files.h): mode 0700, and one that exists must be ours.
#pragma once

#include <ctime>
#include <string>

#include "util/error.h"

namespace primus::snapshot {

struct ExperimentDir {
  std::string root;
  std::string env_dir() const { return root + "/env"; }
  std::string config_dir() const { return root + "/config"; }
  std::string logs_dir() const { return root + "/logs"; }
  std::string metadata_file() const { return root + "/metadata.json"; }
};

// exp_name is sanitised to [A-Za-z0-9._-]; the workspace is created if needed.
Result<ExperimentDir> CreateExperimentDir(const std::string& workspace, const std::string& exp_name, std::time_t when);

// A multi-node job's experiment directory, shared by all its nodes through a
// shared workspace: <workspace>/<exp_name>_<job_id>/, where the workers'
// checkpoints and metrics go (`shared_root`). Node 0's snapshot (metadata,
// env, config, logs) is that directory itself; node R's is nodes/node<R>/
// inside it, so no node overwrites another's files. Unlike
// CreateExperimentDir it joins a directory that exists: every node of the job
// opens the same one, in any order. job_id is sanitised like exp_name.
struct JobExperimentDir {
  std::string shared_root;
  ExperimentDir node;
};
Result<JobExperimentDir> OpenJobExperimentDir(const std::string& workspace, const std::string& exp_name,
                                              const std::string& job_id, int node_rank);

}  // namespace primus::snapshot
