#include "platform/placement.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/sysfs_files.h"
#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

TEST(PlacementTest, EachRankBindsToItsGpusNumaNode) {
  HostInfo host = DetectHost(FixtureRoots("mi300x-8"));
  RankPlacement rank0 = PlaceLocalRank(host, {}, 0, 8);
  EXPECT_EQ(rank0.gpu_index, 0);
  EXPECT_EQ(rank0.numa_node, 0);
  EXPECT_EQ(FormatCpuList(rank0.cpus), "0-95,192-287");
  EXPECT_EQ(rank0.omp_num_threads, 48);  // 192 CPUs shared by the 4 ranks on node 0
  RankPlacement rank5 = PlaceLocalRank(host, {}, 5, 8);
  EXPECT_EQ(rank5.gpu_index, 5);
  EXPECT_EQ(rank5.numa_node, 1);
  EXPECT_EQ(FormatCpuList(CpusForLocalRank(host, {}, 5, 8)), "96-191,288-383");
}

TEST(PlacementTest, VisibleDevicesDecideWhichGpuARankDrives) {
  HostInfo host = DetectHost(FixtureRoots("h100-8"));
  Environment environment = {{"CUDA_VISIBLE_DEVICES", "4,5"}};
  RankPlacement rank0 = PlaceLocalRank(host, environment, 0, 2);
  EXPECT_EQ(rank0.gpu_index, 4);
  EXPECT_EQ(rank0.numa_node, 1);  // GPU 4 hangs off the second socket
  EXPECT_EQ(rank0.omp_num_threads, 56);  // 112 CPUs, both ranks on node 1
}

TEST(PlacementTest, TheAllowedCpusetLimitsTheBinding) {
  HostInfo host = DetectHost(FixtureRoots("mi300x-8"));
  host.allowed_cpus = *ParseCpuList("0-15,96-111");  // e.g. a Slurm allocation
  RankPlacement rank0 = PlaceLocalRank(host, {}, 0, 2);
  EXPECT_EQ(FormatCpuList(rank0.cpus), "0-15");
  EXPECT_EQ(rank0.omp_num_threads, 8);  // both ranks' GPUs are on node 0
  host.allowed_cpus = *ParseCpuList("96-111");  // nothing left on GPU 0's node
  RankPlacement unbound = PlaceLocalRank(host, {}, 0, 2);
  EXPECT_TRUE(unbound.cpus.empty());
  EXPECT_EQ(unbound.numa_node, -1);
  EXPECT_EQ(unbound.omp_num_threads, 8);
}

TEST(PlacementTest, OneNodeDesktopAndGpuLessHosts) {
  HostInfo desktop = DetectHost(FixtureRoots("r9700-1"));
  RankPlacement rank = PlaceLocalRank(desktop, {}, 0, 1);
  EXPECT_EQ(rank.numa_node, 0);  // the GPU says -1 on a one-node machine
  EXPECT_EQ(rank.omp_num_threads, 32);
  HostInfo cpu = DetectHost(FixtureRoots("cpu-only"));
  RankPlacement worker = PlaceLocalRank(cpu, {}, 1, 2);
  EXPECT_EQ(worker.gpu_index, -1);
  EXPECT_EQ(worker.numa_node, 0);
  EXPECT_EQ(worker.omp_num_threads, 1);  // 2 CPUs, 2 workers
}

}  // namespace
}  // namespace primus::platform
