// Where a step's time went, in five phases that add up: compute, the
// communication that was not hidden behind it, data loading, the optimizer,
// and the rest of the step. Sources name their parts their own way
// (StepTimePart in node_sample.h); this is the one place that knows how they
// nest:
//
//   compute, communication, data, optimizer, other
//       taken as they are (the example trainer, or any worker writing
//       "time_parts" into PRIMUS_METRICS_FILE);
//   Megatron-LM's timers (--timing-log-level 1 or 2)
//       forward-backward holds batch-generator (data), the pipeline's
//       send/recv timers and the gradient reductions (all-grads-sync,
//       layernorm- and embedding-grads-all-reduce): compute is what is left
//       of it; optimizer holds params-all-gather (communication); the rest of
//       the iteration is other. Megatron reports each timer's slowest rank,
//       so the phases of one line may come from different ranks; a phase
//       never goes below zero.
//
// Parts of other names are listed (`unplaced`) but not stacked, since
// nothing says what they overlap.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "telemetry/node_sample.h"

namespace primus::telemetry {

enum class StepPhase { kCompute, kCommunication, kData, kOptimizer, kOther };
inline constexpr int kStepPhaseCount = 5;

// "compute", "communication", "data", "optimizer", "other".
const char* StepPhaseName(StepPhase phase);

struct StepTimeBreakdown {
  double seconds[kStepPhaseCount] = {0, 0, 0, 0, 0};  // by StepPhase
  std::vector<std::string> unplaced;                 // part names of no phase
  // The parts are the whole job's view from one rank (Megatron's timers:
  // each the slowest rank's figure), not this rank's own.
  bool job_wide = false;
  // The rank the source names as the slowest in the largest part (Megatron's
  // all option), when it names one.
  std::optional<int> slowest_rank;

  double at(StepPhase phase) const { return seconds[static_cast<int>(phase)]; }
  double total() const;
  // The time the rank did not spend waiting for the others: compute, data and
  // optimizer. The slowest rank is the busiest; the others wait for it.
  double busy() const;
};

// nullopt when the record carries no part this knows.
std::optional<StepTimeBreakdown> BreakDownStepTime(const TrainingMetrics& metrics);

}  // namespace primus::telemetry
