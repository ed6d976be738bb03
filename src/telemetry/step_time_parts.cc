#include "telemetry/step_time_parts.h"

#include <algorithm>
#include <string_view>

namespace primus::telemetry {
namespace {

bool IsMegatronPipelineTimer(std::string_view name) {
  // forward-recv, backward-send, forward-send-backward-recv, ... (schedules.py)
  return (name.starts_with("forward-") || name.starts_with("backward-")) &&
         (name.ends_with("-send") || name.ends_with("-recv"));
}

bool IsMegatronGradientReduction(std::string_view name) {
  return name == "all-grads-sync" || name == "layernorm-grads-all-reduce" || name == "embedding-grads-all-reduce";
}

// Megatron timers that are inside another one, or finer than the phases: they
// are accounted for by their parent.
bool IsMegatronDetail(std::string_view name) {
  return name == "forward-compute" || name == "backward-compute" || name.starts_with("optimizer-");
}

}  // namespace

const char* StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kCompute: return "compute";
    case StepPhase::kCommunication: return "communication";
    case StepPhase::kData: return "data";
    case StepPhase::kOptimizer: return "optimizer";
    case StepPhase::kOther: return "other";
  }
  return "other";
}

double StepTimeBreakdown::total() const {
  double sum = 0;
  for (double part : seconds) sum += part;
  return sum;
}

double StepTimeBreakdown::busy() const {
  return at(StepPhase::kCompute) + at(StepPhase::kData) + at(StepPhase::kOptimizer);
}

std::optional<StepTimeBreakdown> BreakDownStepTime(const TrainingMetrics& metrics) {
  if (metrics.time_parts.empty()) return std::nullopt;
  StepTimeBreakdown breakdown;
  auto add = [&](StepPhase phase, double value) { breakdown.seconds[static_cast<int>(phase)] += value; };
  bool placed = false;
  // Megatron's nesting: filled as the parts are seen, settled after.
  std::optional<double> forward_backward, optimizer, compute_detail;
  double inside_forward_backward = 0, params_gather = 0;
  const StepTimePart* largest = nullptr;
  for (const StepTimePart& part : metrics.time_parts) {
    std::string_view name = part.name;
    bool known = true;
    if (name == "compute") {
      add(StepPhase::kCompute, part.seconds);
    } else if (name == "communication") {
      add(StepPhase::kCommunication, part.seconds);
    } else if (name == "data") {
      add(StepPhase::kData, part.seconds);
    } else if (name == "optimizer" && !optimizer) {
      optimizer = part.seconds;
    } else if (name == "other") {
      add(StepPhase::kOther, part.seconds);
    } else if (name == "forward-backward") {
      forward_backward = part.seconds;
    } else if (name == "batch-generator") {
      add(StepPhase::kData, part.seconds);
      inside_forward_backward += part.seconds;
    } else if (IsMegatronPipelineTimer(name) || IsMegatronGradientReduction(name)) {
      add(StepPhase::kCommunication, part.seconds);
      inside_forward_backward += part.seconds;
    } else if (name == "params-all-gather") {
      add(StepPhase::kCommunication, part.seconds);
      params_gather += part.seconds;
    } else if (name == "forward-compute" || name == "backward-compute") {
      compute_detail = compute_detail.value_or(0) + part.seconds;
    } else if (!IsMegatronDetail(name)) {
      known = false;
      breakdown.unplaced.push_back(part.name);
    }
    placed = placed || known;
    bool own_phase = name == "compute" || name == "communication" || name == "data" || name == "optimizer" ||
                     name == "other";
    if (known && !own_phase) breakdown.job_wide = true;
    if (known && part.slowest_rank && (!largest || part.seconds > largest->seconds)) largest = &part;
  }
  if (!placed) return std::nullopt;
  if (forward_backward) {
    add(StepPhase::kCompute, std::max(0.0, *forward_backward - inside_forward_backward));
  } else if (compute_detail) {
    add(StepPhase::kCompute, *compute_detail);  // level 2 without its parent
  }
  if (optimizer) {
    // The example trainer's optimizer has no gather inside: params_gather is 0 there.
    add(StepPhase::kOptimizer, std::max(0.0, *optimizer - params_gather));
  }
  if (forward_backward && metrics.step_time_s) {
    double accounted = *forward_backward + optimizer.value_or(params_gather);
    add(StepPhase::kOther, std::max(0.0, *metrics.step_time_s - accounted));
  }
  if (largest) breakdown.slowest_rank = largest->slowest_rank;
  return breakdown;
}

}  // namespace primus::telemetry
