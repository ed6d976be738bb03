#include "runtime/container_task_paths.h"

#include "util/environment.h"
#include "train/experiment.h"
#include "util/files.h"

namespace primus::runtime {
namespace {

// The value of `--name VALUE` or `--name=VALUE` in args, or "".
std::string OptionValue(const std::vector<std::string>& args, const std::string& name) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) return args[i + 1];
    if (args[i].starts_with(name + "=")) return args[i].substr(name.size() + 1);
  }
  return "";
}

TaskPaths TrainPaths(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  TaskPaths paths;
  train::ExperimentRequest request;
  request.file = OptionValue(args, "--config");
  if (request.file.empty() && env.count("EXP")) request.file = env.at("EXP");
  std::string replay = OptionValue(args, "--replay");
  if (!replay.empty()) {
    paths.read.push_back(replay);
    request.file = JoinPath(replay, "config/resolved.yaml");
  }
  std::string resume = OptionValue(args, "--resume");
  if (!resume.empty() && resume != "auto" && resume != "none") paths.read.push_back(resume);
  if (request.file.empty()) return paths;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    size_t equals = arg.find('=');
    bool value_of_flag = args[i - 1].starts_with("--") && args[i - 1].find('=') == std::string::npos;
    if (!arg.starts_with("-") && equals != std::string::npos && equals > 0 && !value_of_flag) {
      request.overrides.push_back(arg);
    }
  }
  request.environment = Environment(env.begin(), env.end());
  auto experiment = train::LoadExperiment(request);
  if (!experiment.ok()) return paths;
  paths.read.insert(paths.read.end(), experiment->files.begin(), experiment->files.end());
  if (!experiment->workspace.empty()) paths.written.push_back(experiment->workspace);
  return paths;
}

}  // namespace

TaskPaths FindTaskPaths(const std::string& task, const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env) {
  if (task == "train") return TrainPaths(args, env);
  return {};
}

}  // namespace primus::runtime
