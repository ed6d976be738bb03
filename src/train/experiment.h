// An experiment file for `train`: what to train, with which backend, how
// parallel, where outputs go. Loaded through the config layer (extends,
// ${VAR} interpolation, located errors), validated against one schema
// (docs/experiment.md), then checked against the job's world size before
// anything starts: TP x PP x CP must divide it, and the global batch must be
// micro batch x data-parallel size x accumulation, on the values left after
// the variant and every override. `variants:` keyed by world size pick
// settings by total GPU count. Megatron-LM options and TorchTitan keys are
// checked against the pinned releases (megatron_flags.h, torchtitan_keys.h).
// Primus-format files (work_group, user_name, exp_name, workspace, modules:)
// are recognised and left to Primus (train/primus_experiment.h); only their
// launcher keys are read here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "util/environment.h"
#include "config/value.h"
#include "train/megatron_flags.h"
#include "train/torchtitan_keys.h"
#include "util/error.h"

namespace primus::train {

// The largest number distributed.nproc_per_node may name.
inline constexpr int64_t kMaxProcsPerNode = 4096;

struct Parallelism {
  int tensor = 1, pipeline = 1, context = 1, expert = 1;
  int micro_batch = 1;
  int global_batch = 0;  // 0: micro_batch x data-parallel size x grad_accum
};

struct ExperimentConfig {
  std::string file;                   // as given on the command line
  std::vector<std::string> files;     // every file that contributed (the extends chain)
  config::Value resolved;             // defaults + files + variant + overrides
  // A Primus-format file (modules:, work_group): it runs through Primus
  // (backend "primus"); primus_file is the file as loaded (extends and
  // ${VAR} resolved), and `resolved` holds only the launcher's keys.
  bool primus_style = false;
  config::Value primus_file;

  std::string exp_name;
  std::string workspace;
  std::string backend;                // torch | megatron | torchtitan | command | primus
  std::string interpreter;            // python.interpreter, or the venv's / conda env's python
  std::string conda_env;
  Parallelism parallelism;
  int grad_accum = 1;
  std::string nproc_per_node;         // "" = the launcher's (direct.nproc_per_node)
  int nnodes = 0;                     // 0 = the launcher's
  std::map<std::string, std::string> env;
  int max_restarts = -1;              // -1 = the launcher's
  double hang_timeout = -1;           // -1 = the launcher's
  bool exclude_bad_nodes = false;     // true turns on direct.exclude_bad_nodes
  // The megatron backend: the option table its keys were checked against
  // and its command line is built from (megatron_release.h), and where it came from.
  std::shared_ptr<const MegatronFlags> megatron_table;
  std::string megatron_table_source;
  // The torchtitan backend: its key table (with a custom config module's keys), and its source.
  std::shared_ptr<const TorchTitanKeys> torchtitan_keys;
  std::string torchtitan_keys_source;
  std::vector<std::string> warnings;  // said once at load (log::Warn by the caller)
};

struct ExperimentRequest {
  std::string file;
  std::vector<std::string> overrides;  // "a.b=c" from the command line, applied last
  Environment environment;
};

// Loads, merges and validates the file (not yet the world size).
Result<ExperimentConfig> LoadExperiment(const ExperimentRequest& request);

// Applies the `variants:` entry for this world size (command-line overrides
// still win), then checks parallelism and batch sizes against it.
Status ResolveForWorldSize(const ExperimentRequest& request, int world_size, ExperimentConfig* experiment);

// distributed.nproc_per_node is auto, gpu, cpu (any case) or a number from 1
// to kMaxProcsPerNode, as the launcher reads --nproc-per-node; empty (unset)
// passes. Both file formats are checked with it.
Status CheckNprocPerNode(const ExperimentConfig& experiment);

// The experiment schema's keys, for docs and suggestions.
std::vector<std::string> ExperimentKeys();

}  // namespace primus::train
