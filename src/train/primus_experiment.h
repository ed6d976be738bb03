// A Primus-format experiment (work_group, user_name, exp_name, workspace,
// modules: <name>: {framework, config, model, overrides}) as the launcher
// sees it before handing it to Primus. Primus itself resolves and runs it;
// we read enough to stop a doomed launch early and to show the plan: which
// module runs, its framework, and the parallel layout and batch sizes after
// the module file, the model file, the experiment's overrides and the
// command line's overrides, in Primus's own order and syntax. Arguments
// after --config reach Primus verbatim.
#pragma once

#include <string>
#include <vector>

#include "util/environment.h"
#include "config/value.h"
#include "train/primus_install.h"
#include "util/error.h"

namespace primus::train {

struct PrimusExperiment {
  std::string module_name;        // the module Primus runs: pre_trainer (pretrain), post_trainer (posttrain)
  std::string framework;          // megatron, torchtitan, maxtext, megatron_bridge, ...
  std::string module_config;      // modules.<m>.config, e.g. pre_trainer.yaml
  std::string model;              // modules.<m>.model, e.g. llama3.1_8B.yaml
  std::vector<std::string> args;  // what follows --config on our command line, verbatim
  // Module file <- model file <- the experiment's overrides <- the command
  // line's; Null when they could not be read (see unresolved).
  config::Value params;
  std::string unresolved;         // why params are Null ("" when they were read)
};

// subtask: pretrain | posttrain. Errors (exit 3) name the file and line.
Result<PrimusExperiment> ReadPrimusExperiment(const config::Value& file, const std::string& subtask,
                                              const PrimusInstall& install, const std::vector<std::string>& args,
                                              const Environment& environment);

// Primus's override syntax (key=value, --key=value, --key value, --key; dots
// nest), its value types (true/false, None, integers, decimals, strings) and
// its own train options (--data_path, --backend_path, --export_config), which
// are not overrides. Each value's origin names the argument.
config::Value ParsePrimusOverrides(const std::vector<std::string>& args);

struct PrimusLayout {
  bool known = false;  // false: the framework's layout is Primus's to check
  int64_t tensor = 1, pipeline = 1, context = 1, expert = 1, micro_batch = 1, global_batch = 0, data_parallel = 1;
  int64_t grad_accum = 1;
};

// TP x PP x CP divides the world size, EP divides DP x CP and the expert
// count, the global batch is a multiple of micro batch x DP; a violation is
// exit 3 naming the keys and where each value came from.
Result<PrimusLayout> CheckPrimusLayout(const PrimusExperiment& experiment, int world_size);

// One line for the plan: "module pre_trainer: megatron, config ..., model ...; TP 2 PP 1 ..."
std::string DescribePrimusPlan(const PrimusExperiment& experiment, const PrimusLayout& layout, int world_size);

}  // namespace primus::train
