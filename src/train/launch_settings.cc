#include "train/launch_settings.h"

#include <string>

namespace primus::train {
namespace {

// "experiment exp.yaml:12:5": where in the experiment the value was written.
config::Origin InExperiment(const ExperimentConfig& experiment, std::string_view key) {
  config::Origin origin = experiment.resolved.Find(key)->origin();
  origin.source = "experiment " + origin.source;
  origin.from_scheduler = false;
  return origin;
}

}  // namespace

Result<config::Value> ExperimentLaunchLayer(const ExperimentConfig& experiment, const config::LauncherConfig& launcher) {
  config::Value layer = config::Value::EmptyMap();
  if (!experiment.nproc_per_node.empty()) {
    // A Primus-format file's launcher keys reach here unchecked.
    if (Status status = CheckNprocPerNode(experiment); !status.ok()) return status.error();
    (void)layer.Set("direct.nproc_per_node", config::Value::String(experiment.nproc_per_node,
                                                                   InExperiment(experiment, "distributed.nproc_per_node")));
  }
  if (experiment.nnodes > 0) {
    (void)layer.Set("direct.nnodes", config::Value::Int(experiment.nnodes, InExperiment(experiment, "distributed.nnodes")));
  }
  if (experiment.max_restarts >= 0) {
    (void)layer.Set("direct.max_restarts",
                    config::Value::Int(experiment.max_restarts, InExperiment(experiment, "fault_tolerance.max_restarts")));
  }
  if (experiment.exclude_bad_nodes) {
    (void)layer.Set("direct.exclude_bad_nodes",
                    config::Value::Bool(true, InExperiment(experiment, "fault_tolerance.exclude_bad_nodes")));
  }
  if (experiment.hang_timeout >= 0) {
    (void)layer.Set("direct.hang_timeout", config::Value::Double(experiment.hang_timeout,
                                                                 InExperiment(experiment, "fault_tolerance.hang_timeout")));
  } else {
    config::Origin origin;
    origin.source = "train.hang_timeout, " + launcher.OriginOf("train.hang_timeout").Describe();
    (void)layer.Set("direct.hang_timeout", config::Value::Double(launcher.GetDouble("train.hang_timeout"), origin));
  }
  return layer;
}

Result<config::LauncherConfig> WithExperimentLaunchSettings(const config::LauncherConfig& launcher,
                                                            const ExperimentConfig& experiment) {
  auto layer = ExperimentLaunchLayer(experiment, launcher);
  if (!layer.ok()) return layer.error();
  return launcher.WithExperimentLayer(std::move(*layer));
}

}  // namespace primus::train
