// `checkpoint.resume: auto` across runs: every launch of an experiment gets a
// new directory (<workspace>/<exp_name>_<time>), so the checkpoints of a run
// that was stopped are in another directory than the next run's. This finds
// them: the checkpoint directories of the earlier runs of the same experiment
// in the workspace that did not finish (metadata.json's status is not
// "succeeded": running a finished run's command again trains again), newest
// first (by their newest checkpoint file), that hold a step_<N>.pt. Which of its files is valid is the trainer's to decide, as
// for its own directory (examples/gpt/checkpoint.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace primus::train {

struct EarlierCheckpoints {
  std::string dir;         // <run>/checkpoints
  int64_t newest_step = 0;  // the highest step_<N>.pt there
};

// Runs named <exp_name>_<anything> under `workspace`, except `this_run`, at
// most `max_runs` of them looked at (the newest by directory time).
std::optional<EarlierCheckpoints> FindEarlierCheckpoints(const std::string& workspace, const std::string& exp_name,
                                                         const std::string& this_run, size_t max_runs = 256);

}  // namespace primus::train
