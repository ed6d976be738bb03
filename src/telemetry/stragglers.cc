#include "telemetry/stragglers.h"

#include <algorithm>
#include <cmath>

namespace primus::telemetry {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

void StragglerWatch::Reset() {
  rank_history_.clear();
  gpu_slow_in_a_row_.clear();
  rank_stragglers_.clear();
  gpu_stragglers_.clear();
}

void StragglerWatch::Observe(const std::vector<RankTiming>& ranks, const std::vector<GpuUtilization>& gpus) {
  rank_stragglers_.clear();
  if (ranks.size() >= 2) {
    std::vector<double> times;
    for (const RankTiming& timing : ranks) times.push_back(timing.step_time_s);
    double median = Median(times);
    for (const RankTiming& timing : ranks) {
      RankHistory& history = rank_history_[timing.rank];
      if (timing.step != history.last_step) {  // a sample that brought new steps
        history.last_step = timing.step;
        bool slow = median > 0 && timing.step_time_s >= kSlowRankRatio * median;
        history.slow_in_a_row = slow ? history.slow_in_a_row + 1 : 0;
      }
      if (history.slow_in_a_row >= kStragglerSamples && median > 0 && timing.step_time_s >= kSlowRankRatio * median) {
        rank_stragglers_.push_back({timing.rank, timing.node_rank, timing.step_time_s, median,
                                    std::round(timing.step_time_s / median * 100) / 100, history.slow_in_a_row});
      }
    }
  }
  gpu_stragglers_.clear();
  if (gpus.size() >= 2) {
    std::vector<double> values;
    for (const GpuUtilization& gpu : gpus) values.push_back(gpu.utilization_percent);
    double median = Median(values);
    std::map<std::pair<int, int>, int> next;
    for (const GpuUtilization& gpu : gpus) {
      auto key = std::make_pair(gpu.node_rank, gpu.gpu);
      bool slow = gpu.utilization_percent <= median - kSlowGpuPoints;
      int in_a_row = slow ? gpu_slow_in_a_row_[key] + 1 : 0;
      next[key] = in_a_row;
      if (in_a_row >= kStragglerSamples) {
        gpu_stragglers_.push_back({gpu.node_rank, gpu.gpu, gpu.utilization_percent,
                                   static_cast<int>(std::lround(median)), in_a_row});
      }
    }
    gpu_slow_in_a_row_ = std::move(next);
  } else {
    gpu_slow_in_a_row_.clear();
  }
}

}  // namespace primus::telemetry
