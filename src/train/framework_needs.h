// What a backend's workers need from the host they start on, known before any
// of them starts: a GPU each, and the Python modules their interpreter must
// find. `train` checks both before the launch (tasks/train_steps.cc), so that
// one worker too many, or an interpreter without torch, is one clear error
// naming the fix instead of a traceback on every rank.
#pragma once

#include <string>
#include <vector>

#include "train/experiment.h"
#include "util/error.h"

namespace primus::train {

struct FrameworkNeeds {
  bool gpu_per_worker = false;
  std::string gpus_because;               // "the megatron backend", "training.device cuda", ...
  // Module names the interpreter must find from the current directory, as
  // `python -m` and a script's imports would: torch, torchtitan.
  std::vector<std::string> modules;
};

// `visible_gpus`: what the workers will see; training.device auto takes a
// GPU per worker only where there are GPUs. Primus checks its GPUs itself.
// The command and jax backends
// run the user's own program: nothing is known about it.
FrameworkNeeds NeedsOf(const ExperimentConfig& experiment, int visible_gpus);

// An error when `nproc_per_node` workers need more GPUs than the `visible`
// ones on `host`; `visibility` names the variable that hid some ("" when
// none did).
Status CheckGpusFit(const FrameworkNeeds& needs, int nproc_per_node, int visible, const std::string& host,
                    const std::string& visibility);

// The interpreter's arguments that print, one per line, each module of
// `needs` it cannot find (importlib's find_spec: nothing is imported, so it
// takes the interpreter's start-up time only). Module names are arguments,
// never program text.
std::vector<std::string> FindModulesArgs(const FrameworkNeeds& needs);

// The error for the modules the probe printed (`output`), or Ok when it
// printed none. `interpreter` as the experiment gives it.
Status CheckModulesFound(const FrameworkNeeds& needs, const std::string& output, const std::string& interpreter,
                         const std::string& backend);

}  // namespace primus::train
