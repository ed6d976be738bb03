#include "runtime/slurm_job_dir.h"

#include <cctype>

#include "snapshot/experiment_dir.h"
#include "train/experiment.h"
#include "train/replay.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

std::string Absolute(const std::string& path, const std::string& cwd) {
  return path.starts_with("/") ? path : JoinPath(cwd, path);
}

// snapshot's rule for names in paths; WriteJobFiles checks that both agree.
std::string SafeName(const std::string& text) {
  std::string name;
  for (char c : text.empty() ? std::string("exp") : text) {
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  }
  return name;
}

JobDirPlan Plan(const std::string& workspace, const std::string& name, const std::string& cwd) {
  return JobDirPlan{Absolute(workspace, cwd), SafeName(name)};
}

// train's own reading of its arguments, as far as the experiment's name and
// workspace need it: --config FILE, --replay DIR, key=value overrides, $EXP.
struct TrainExperiment {
  std::string file;
  std::string replay;
  std::vector<std::string> overrides;
};

TrainExperiment ReadTrainArguments(const std::vector<std::string>& args, const Environment& environment) {
  TrainExperiment found;
  for (size_t i = 1; i < args.size(); ++i) {  // args[0] is the subtask
    const std::string& arg = args[i];
    for (auto [flag, target] : {std::pair{"--config", &found.file}, std::pair{"--replay", &found.replay}}) {
      std::string name(flag);
      if (arg == name && i + 1 < args.size()) *target = args[++i];
      else if (arg.starts_with(name + "=")) *target = arg.substr(name.size() + 1);
    }
    size_t equals = arg.find('=');
    if (!arg.starts_with("-") && equals != std::string::npos && equals > 0) found.overrides.push_back(arg);
  }
  if (found.file.empty() && found.replay.empty()) found.file = Lookup(environment, "EXP").value_or("");
  return found;
}

}  // namespace

std::string JobDirPlan::DirFor(const std::string& job_id) const { return JoinPath(workspace, name + "_" + job_id); }

std::string JobDirPlan::LogPattern() const {
  return JoinPath(ReplaceAll(workspace, "%", "%%"), name + "_%j/logs/slurm-%j.out");
}

Result<JobDirPlan> PlanJobDir(const Invocation& invocation, const Environment& environment, const std::string& cwd) {
  if (invocation.task != "train") return Plan("output", invocation.task, cwd);

  TrainExperiment experiment = ReadTrainArguments(invocation.task_args, environment);
  train::ExperimentRequest request;
  request.environment = environment;
  request.overrides = experiment.overrides;
  request.file = experiment.file;
  if (!experiment.replay.empty()) {
    Result<train::ReplaySource> source = train::LoadReplaySource(experiment.replay);
    if (!source.ok()) return source.error();
    request.file = source->resolved_config;
  }
  if (request.file.empty()) return Plan("output", "train", cwd);  // train itself will say what is missing
  Result<train::ExperimentConfig> loaded = train::LoadExperiment(request);
  if (!loaded.ok()) return loaded.error();
  return Plan(loaded->workspace, loaded->exp_name, cwd);
}

Result<std::string> WriteJobFiles(const JobDirPlan& plan, const std::string& job_id, const std::string& script) {
  Result<snapshot::JobExperimentDir> dir = snapshot::OpenJobExperimentDir(plan.workspace, plan.name, job_id, 0);
  if (!dir.ok()) return dir.error();
  if (dir->shared_root != plan.DirFor(job_id)) {
    return UnavailableError("job " + job_id + "'s directory is " + dir->shared_root + ", but its log was sent to " +
                            plan.DirFor(job_id) + " (a primus-cli bug: the two namings differ)");
  }
  std::string path = JoinPath(dir->shared_root, "sbatch.sh");
  if (Status written = WriteFileAtomic(path, script, 0700); !written.ok()) return written.error();
  return path;
}

}  // namespace primus::runtime
