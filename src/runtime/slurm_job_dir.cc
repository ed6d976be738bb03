#include "runtime/slurm_job_dir.h"

#include "train/experiment.h"
#include "train/replay.h"
#include "util/files.h"

namespace primus::runtime {
namespace {

std::string Absolute(const std::string& path, const std::string& cwd) {
  return path.starts_with("/") ? path : JoinPath(cwd, path);
}

// train's own reading of its arguments, as far as the experiment's name and
// workspace need it: --config FILE, --replay DIR, key=value overrides, $EXP.
struct TrainExperiment {
  std::string file;
  std::string replay;
  std::vector<std::string> overrides;
};

TrainExperiment ReadTrainArguments(const std::vector<std::string>& args, const config::Environment& environment) {
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
  if (found.file.empty() && found.replay.empty()) found.file = environment.Get("EXP").value_or("");
  return found;
}

}  // namespace

Result<JobDirPlan> PlanJobDir(const Launch& launch, const config::Environment& environment, const std::string& cwd) {
  if (launch.task != "train") return JobDirPlan{Absolute("output", cwd), launch.task};

  TrainExperiment experiment = ReadTrainArguments(launch.task_args, environment);
  train::ExperimentRequest request;
  request.environment = environment;
  request.overrides = experiment.overrides;
  request.file = experiment.file;
  if (!experiment.replay.empty()) {
    Result<train::ReplaySource> source = train::LoadReplaySource(experiment.replay);
    if (!source.ok()) return source.error();
    request.file = source->resolved_config;
  }
  if (request.file.empty()) return JobDirPlan{Absolute("output", cwd), "train"};  // train itself will say what is missing
  Result<train::ExperimentConfig> loaded = train::LoadExperiment(request);
  if (!loaded.ok()) return loaded.error();
  return JobDirPlan{Absolute(loaded->workspace, cwd), loaded->exp_name};
}

}  // namespace primus::runtime
