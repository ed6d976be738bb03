#include "telemetry/job_view.h"

#include <gtest/gtest.h>

#include "telemetry/telemetry_test_util.h"

namespace primus::telemetry {
namespace {

WorkerStats Worker(int rank, int64_t step, double step_time, double loss) {
  WorkerStats worker = MakeWorker(rank, rank % 2, 1000 + rank, "running");
  worker.metrics.step = step;
  worker.metrics.total_steps = 200;
  worker.metrics.loss = loss;
  worker.metrics.tokens_per_s = 100;
  worker.metrics.step_time_s = step_time;
  return worker;
}

NodeSample Node(int node_rank, std::vector<WorkerStats> workers, std::vector<int> utilization = {}) {
  NodeSample node;
  node.node_rank = node_rank;
  node.host = "host" + std::to_string(node_rank + 1);
  node.workers = std::move(workers);
  for (size_t i = 0; i < utilization.size(); ++i) {
    GpuStats gpu = MakeGpu(static_cast<int>(i), "0000:0" + std::to_string(i) + ":00.0", "amd");
    gpu.utilization_percent = utilization[i];
    gpu.memory_used_bytes = 1 << 30;
    node.gpus.push_back(gpu);
  }
  node.age_s = 0.5;
  return node;
}

JobInfo Info() {
  JobInfo info;
  info.run_id = "run";
  info.coordinator = "host1";
  info.state = JobState::kRunning;
  info.nnodes = 2;
  info.world_size = 4;
  return info;
}

TEST(JobViewTest, TheJobsFiguresComeFromItsRanks) {
  JobAggregator job;
  job.Update(Info(), {Node(1, {Worker(2, 120, 0.42, 3.0), Worker(3, 121, 0.44, 3.1)}),
                      Node(0, {Worker(0, 122, 0.40, 3.21), Worker(1, 121, 0.41, 3.3)})}, 1000.0);
  Json view = job.View();
  EXPECT_EQ(view["format"], "primus-job-telemetry/1");
  const Json& figures = view["job"];
  EXPECT_EQ(figures["state"], "running");
  EXPECT_EQ(figures["step"], 120);  // the lowest
  EXPECT_EQ(figures["total_steps"], 200);
  EXPECT_EQ(figures["progress"], 0.6);
  EXPECT_EQ(figures["loss"], 3.21);  // rank 0's
  EXPECT_EQ(figures["tokens_per_s"], 400.0);
  EXPECT_NEAR(figures["median_step_time_s"].get<double>(), 0.415, 1e-9);
  EXPECT_FALSE(figures.contains("eta_s"));  // one sample: no rate yet
  ASSERT_EQ(view["nodes"].size(), 2u);
  EXPECT_EQ(view["nodes"][0]["node_rank"], 0);  // in node order
  EXPECT_EQ(view["nodes"][0]["age_s"], 0.5);
  EXPECT_TRUE(view["stragglers"].empty());

  job.Update(Info(), {Node(0, {Worker(0, 140, 0.40, 3.0), Worker(1, 140, 0.41, 3.3)}),
                      Node(1, {Worker(2, 140, 0.42, 3.0), Worker(3, 140, 0.44, 3.1)})}, 1010.0);
  EXPECT_EQ(job.View()["job"]["eta_s"], 30.0);  // 20 steps in 10 s, 60 to go
}

TEST(JobViewTest, TheLossIsTheLowestRankThatReportsOne) {
  // Megatron-LM prints on its last rank only: ranks 0-2 have steps from
  // their own files, or nothing; rank 3's printed line has the loss.
  JobAggregator job;
  WorkerStats silent = MakeWorker(0, 0, 1000, "running");
  WorkerStats last = Worker(3, 50, 0.4, 2.75);
  job.Update(Info(), {Node(0, {silent}), Node(1, {last})}, 1000.0);
  EXPECT_DOUBLE_EQ(job.View()["job"]["loss"].get<double>(), 2.75);
}

TEST(JobViewTest, UnknownFiguresAreLeftOut) {
  JobAggregator job;
  WorkerStats bare = MakeWorker(0, 0, 1, "running");
  job.Update(Info(), {Node(0, {bare})}, 5.0);
  const Json& figures = job.View()["job"];
  for (const char* key : {"step", "total_steps", "progress", "eta_s", "loss", "tokens_per_s", "median_step_time_s"}) {
    EXPECT_FALSE(figures.contains(key)) << key;
  }
}

TEST(JobViewTest, StragglersAndTheHistoryLine) {
  JobAggregator job;
  for (int i = 0; i < 3; ++i) {
    job.Update(Info(), {Node(0, {Worker(0, 10 + i, 0.40, 3.0), Worker(1, 10 + i, 0.41, 3.3)}, {97, 95}),
                        Node(1, {Worker(2, 10 + i, 0.42, 3.0), Worker(3, 10 + i, 0.9, 3.1)}, {96, 30})},
               100.0 + i);
  }
  Json view = job.View();
  ASSERT_EQ(view["stragglers"].size(), 2u);
  const Json& rank = view["stragglers"][0];
  EXPECT_EQ(rank["kind"], "rank");
  EXPECT_EQ(rank["rank"], 3);
  EXPECT_EQ(rank["host"], "host2");
  EXPECT_EQ(rank["samples"], 3);
  const Json& gpu = view["stragglers"][1];
  EXPECT_EQ(gpu["kind"], "gpu");
  EXPECT_EQ(gpu["node_rank"], 1);
  EXPECT_EQ(gpu["gpu"], 1);
  EXPECT_EQ(gpu["utilization_percent"], 30);

  Json line = job.HistoryLine();
  EXPECT_EQ(line["time"], 102.0);
  EXPECT_EQ(line["state"], "running");
  EXPECT_EQ(line["step"], 12);
  EXPECT_EQ(line["stragglers"], Json::array({3}));
  ASSERT_EQ(line["nodes"].size(), 2u);
  EXPECT_EQ(line["nodes"][1]["gpu_utilization_percent"], Json::array({96, 30}));
  EXPECT_EQ(line["nodes"][1]["gpu_memory_used_bytes"], Json::array({1 << 30, 1 << 30}));
  ASSERT_EQ(line["ranks"].size(), 4u);
  EXPECT_EQ(line["ranks"][3]["step_time_s"], 0.9);
  EXPECT_EQ(line["ranks"][3]["node_rank"], 1);
}

TEST(JobViewTest, ANewGenerationStartsTheStragglerCountOver) {
  JobAggregator job;
  JobInfo info = Info();
  for (int i = 0; i < 3; ++i) {
    job.Update(info, {Node(0, {Worker(0, 10 + i, 0.4, 3), Worker(1, 10 + i, 0.9, 3), Worker(2, 10 + i, 0.4, 3)})}, i);
  }
  EXPECT_EQ(job.View()["stragglers"].size(), 1u);
  info.generation = 1;
  info.state = JobState::kRestarting;
  job.Update(info, {Node(0, {Worker(0, 1, 0.4, 3), Worker(1, 1, 0.9, 3), Worker(2, 1, 0.4, 3)})}, 10);
  EXPECT_TRUE(job.View()["stragglers"].empty());
  EXPECT_EQ(job.View()["job"]["state"], "restarting");
  EXPECT_EQ(job.View()["job"]["generation"], 1);
}

}  // namespace
}  // namespace primus::telemetry
