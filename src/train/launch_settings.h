// The experiment's launch settings as a launcher configuration layer (layer
// 5a, config/launcher_config.h): the experiment file's values beat the
// launcher's files and defaults, and a flag, a PRIMUS_* variable or the
// scheduler beats the experiment. Being a layer, the rule shows where users
// look: `config show --origin --experiment exp.yaml` and the `--dry-run` plan
// name "experiment exp.yaml:12:5" as the origin.
//
//   distributed.nproc_per_node    -> direct.nproc_per_node  (when set)
//   distributed.nnodes            -> direct.nnodes          (when above 0)
//   fault_tolerance.max_restarts  -> direct.max_restarts    (when 0 or more)
//   fault_tolerance.hang_timeout  -> direct.hang_timeout    (when 0 or more),
//     else train.hang_timeout     -> direct.hang_timeout    (a training run is
//     never left without a hang watchdog by default; 0 still turns it off)
#pragma once

#include "config/launcher_config.h"
#include "config/value.h"
#include "train/experiment.h"
#include "util/error.h"

namespace primus::train {

// The layer for this experiment, read against the launcher's train.hang_timeout.
// A distributed.nproc_per_node that is not auto, gpu, cpu or 1 to 4096 is a
// ConfigError located in the experiment file.
Result<config::Value> ExperimentLaunchLayer(const ExperimentConfig& experiment, const config::LauncherConfig& launcher);

// `launcher` with that layer in its place.
Result<config::LauncherConfig> WithExperimentLaunchSettings(const config::LauncherConfig& launcher,
                                                            const ExperimentConfig& experiment);

}  // namespace primus::train
