#include "snapshot/experiment_dir.h"


#include <cctype>

#include "util/files.h"
#include "util/private_files.h"

namespace primus::snapshot {

namespace {

std::string SafeName(const std::string& text) {
  std::string name;
  for (char c : text) {
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  }
  return name;
}

Status MakeWorkspace(const std::string& workspace) {
  if (Status made = MakeDirs(workspace, PrivateDirMode()); !made.ok()) {
    Error error = made.error();
    error.hint = "the workspace comes from the experiment's 'workspace:' key; choose a writable directory";
    return error;
  }
  return Status::Ok();
}

}  // namespace

Result<JobExperimentDir> OpenJobExperimentDir(const std::string& workspace, const std::string& exp_name,
                                              const std::string& job_id, int node_rank) {
  if (Status made = MakeWorkspace(workspace); !made.ok()) return made.error();
  JobExperimentDir job;
  job.shared_root = JoinPath(workspace, SafeName(exp_name.empty() ? "exp" : exp_name) + "_" + SafeName(job_id));
  job.node.root = node_rank == 0 ? job.shared_root
                                 : JoinPath(job.shared_root, "nodes/node" + std::to_string(node_rank));
  // The job's directory exists when another node, or an earlier run of the
  // job, made it: it is joined only when it is ours (util/private_files.h).
  std::string relative = JoinPath(SafeName(exp_name.empty() ? "exp" : exp_name) + "_" + SafeName(job_id),
                                  node_rank == 0 ? "" : "nodes/node" + std::to_string(node_rank));
  if (Status made = MakePrivateDirs(workspace, relative); !made.ok()) return made.error();
  for (const std::string& sub : {job.node.env_dir(), job.node.config_dir(), job.node.logs_dir()}) {
    if (Status made = MakePrivateDir(sub); !made.ok()) return made.error();
  }
  return job;
}

Result<ExperimentDir> CreateExperimentDir(const std::string& workspace, const std::string& exp_name, std::time_t when) {
  if (Status made = MakeWorkspace(workspace); !made.ok()) return made.error();
  std::string name = SafeName(exp_name.empty() ? std::string("exp") : exp_name);
  tm local;
  localtime_r(&when, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &local);
  auto root = MakeFreshDir(workspace, name + "_" + stamp, FreshName::kCounter);
  if (!root.ok()) {
    Error error = root.error();
    if (error.hint.empty()) error.hint = "check that the workspace is writable";
    return error;
  }
  ExperimentDir dir{*root};
  for (const std::string& sub : {dir.env_dir(), dir.config_dir(), dir.logs_dir()}) {
    if (Status made = MakePrivateDir(sub); !made.ok()) return made.error();
  }
  return dir;
}

}  // namespace primus::snapshot
