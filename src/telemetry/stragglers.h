// Names the ranks and GPUs that hold a job back (docs/monitor.md,
// "Stragglers"), sample by sample:
//   - a rank whose step_time_s is at least 1.25x the median over all ranks in
//     each of the last 3 samples that brought it new steps (a sample where its
//     step did not move neither counts for nor against it);
//   - a GPU whose utilization is 20 points or more below the median over all
//     the job's GPUs in each of the last 3 samples.
// Both need at least two ranks (GPUs) to compare; one slow sample is noise
// and names nobody.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace primus::telemetry {

inline constexpr double kSlowRankRatio = 1.25;
inline constexpr int kSlowGpuPoints = 20;
inline constexpr int kStragglerSamples = 3;

double Median(std::vector<double> values);  // 0 for none

struct RankTiming {
  int rank = 0;
  int node_rank = 0;
  int64_t step = 0;
  double step_time_s = 0;
};

struct GpuUtilization {
  int node_rank = 0;
  int gpu = 0;
  int utilization_percent = 0;
};

struct RankStraggler {
  int rank = 0;
  int node_rank = 0;
  double step_time_s = 0;
  double median_step_time_s = 0;
  double ratio = 0;
  int samples = 0;
};

struct GpuStraggler {
  int node_rank = 0;
  int gpu = 0;
  int utilization_percent = 0;
  int median_utilization_percent = 0;
  int samples = 0;
};

class StragglerWatch {
 public:
  // One sample of the whole job: the ranks that reported a step and a step
  // time, and the GPUs that reported a utilization.
  void Observe(const std::vector<RankTiming>& ranks, const std::vector<GpuUtilization>& gpus);
  const std::vector<RankStraggler>& ranks() const { return rank_stragglers_; }
  const std::vector<GpuStraggler>& gpus() const { return gpu_stragglers_; }
  // A new generation: ranks and GPUs may be other processes now.
  void Reset();

 private:
  struct RankHistory {
    int64_t last_step = -1;
    int slow_in_a_row = 0;
  };
  std::map<int, RankHistory> rank_history_;                 // by rank
  std::map<std::pair<int, int>, int> gpu_slow_in_a_row_;    // by (node rank, gpu)
  std::vector<RankStraggler> rank_stragglers_;
  std::vector<GpuStraggler> gpu_stragglers_;
};

}  // namespace primus::telemetry
