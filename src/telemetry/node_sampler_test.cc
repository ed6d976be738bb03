#include "telemetry/node_sampler.h"

#include <gtest/gtest.h>

#include <fstream>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"
#include "util/scoped_temp_dir.h"

namespace primus::telemetry {
namespace {

TEST(NodeSamplerTest, OneSampleOfAFixtureNode) {
  ScopedTempDir dir;
  std::string metrics = dir.path() + "/host.rank0.metrics.jsonl";
  std::ofstream(metrics) << "{\"step\": 5, \"total_steps\": 10, \"loss\": 2.0}\n";
  platform::Roots roots = platform::FixtureRoots("mi300x-8");
  NodeSampler sampler({roots, platform::DetectHost(roots).gpus, "enp193s0f0", "/nonexistent/nvml"});
  NodeSample sample = sampler.Sample(1, "mi300x-node01", 2,
                                     {{{0, 0, 4242, true}, metrics}, {{1, 1, 4243, true}, ""}}, 1764060000.5, 7.0);
  EXPECT_EQ(sample.node_rank, 1);
  EXPECT_EQ(sample.generation, 2);
  EXPECT_EQ(sample.time, 1764060000.5);
  EXPECT_EQ(sample.host_stats.cpus, 384);
  ASSERT_EQ(sample.host_stats.net.size(), 1u);
  EXPECT_EQ(sample.host_stats.net[0].interface, "enp193s0f0");
  EXPECT_EQ(sample.gpus.size(), 8u);
  ASSERT_EQ(sample.workers.size(), 2u);
  EXPECT_EQ(sample.workers[0].metrics.step, 5);
  EXPECT_EQ(sample.workers[0].state, "running");
  EXPECT_FALSE(sample.workers[1].metrics.step);
  EXPECT_EQ(sample.workers[1].state, "sleeping");
}

TEST(NodeSamplerTest, TheJobsInterface) {
  platform::HostInfo host = platform::DetectHost(platform::FixtureRoots("mi300x-8"));
  EXPECT_EQ(JobInterface(host, "10.0.0.1", true, "", ""), "lo");
  EXPECT_EQ(JobInterface(host, "127.0.0.1", false, "", ""), "lo");
  EXPECT_EQ(JobInterface(host, "10.10.3.4", false, "", ""), "enp193s0f0");
  EXPECT_EQ(JobInterface(host, "192.168.2.9", false, "", ""), "enp74s0np0");
  EXPECT_EQ(JobInterface(host, "10.10.3.4", false, "ib0,ib1", ""), "ib0");
  EXPECT_EQ(JobInterface(host, "10.10.3.4", false, "^docker", "=eth3"), "eth3");
}

}  // namespace
}  // namespace primus::telemetry
