// Backends turn a resolved experiment into the worker command the node agent
// starts once per rank:
//   torch       <python> <script> [--model ... --steps ... flags] [torch.args] [extra]
//   megatron    <python> $MEGATRON_PATH/pretrain_gpt.py --tensor-model-parallel-size ... [extra]
//   torchtitan  <python> -m torchtitan.train --job.config_file <exp>/config/torchtitan.toml [extra]
//   command     command.argv [extra]
//   primus      <python> <primus>/primus/cli/main.py train pretrain|posttrain --config <exp> [extra, verbatim]
// where <python> is python.interpreter, the venv's bin/python, or
// `conda run --no-capture-output -n ENV python`. Megatron's arguments follow
// its own parser at the pinned release (train/megatron_flags.h), TorchTitan's
// job file its job config (train/torchtitan_keys.h); `train posttrain` runs
// megatron.posttrain_script with --sft, or torchtitan.posttrain_module.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "train/experiment.h"
#include "train/primus_install.h"
#include "util/error.h"

namespace primus::train {

struct BackendRequest {
  const ExperimentConfig* experiment = nullptr;  // resolved for the world size
  std::string experiment_dir;
  std::vector<std::string> extra_args;           // hooks' extra.k=v, then the command line's --k v
  std::string resume;                            // --resume from the command line ("" = the file's)
  std::map<std::string, std::string> environment;  // the launcher's environment (MEGATRON_PATH)
  std::string subtask = "pretrain";              // pretrain | posttrain
  const PrimusInstall* primus = nullptr;         // the primus backend's installation
  // resume auto: the checkpoints of an earlier run of the experiment
  // (train/earlier_checkpoints.h), taken when this run has none of its own.
  std::string resume_fallback;
};

struct BackendCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;            // defaults the backend needs (never over the user's)
  std::map<std::string, std::string> files;          // path -> content, written before the launch
  std::string metrics_file;                          // rank 0's JSON lines, "" when the backend has none
  std::string checkpoint_dir;
  std::vector<std::string> framework_env;            // direct.framework_env's frameworks the workers need ("jax")
};

Result<BackendCommand> BuildBackendCommand(const BackendRequest& inputs);

// Whether the experiment's backend can run this train subtask: a posttrain
// with the torchtitan backend needs torchtitan.posttrain_module (exit 3
// naming it otherwise). Checked before anything is created.
Status CheckBackendSubtask(const ExperimentConfig& experiment, std::string_view subtask);

}  // namespace primus::train
