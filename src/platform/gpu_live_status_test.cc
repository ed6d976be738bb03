#include "platform/gpu_live_status.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

TEST(VendorRuntimeTest, AbsentLibrariesAreNotAnError) {
  HostInfo host = DetectHost(FixtureRoots("h100-8"));
  std::vector<GpuLiveStatus> statuses =
      QueryLiveStatus(host, FixtureRoots("h100-8"), {"/nonexistent/libnvidia-ml.so.1", "/nonexistent/libamd_smi.so"});
  ASSERT_EQ(statuses.size(), 8u);
  EXPECT_EQ(statuses[0].pci_bus_id, "0000:18:00.0");
  EXPECT_TRUE(statuses[0].sources.empty());
  EXPECT_EQ(statuses[0].memory_used_bytes, -1);
  EXPECT_TRUE(QueryLiveStatus(DetectHost(FixtureRoots("cpu-only")), FixtureRoots("cpu-only")).empty());
}

TEST(VendorRuntimeTest, NvmlWhenItCanBeLoaded) {
  HostInfo host = DetectHost(FixtureRoots("h100-8"));
  std::vector<GpuLiveStatus> statuses = QueryLiveStatus(host, FixtureRoots("h100-8"), {FAKE_NVML_PATH, ""});
  ASSERT_EQ(statuses.size(), 8u);
  EXPECT_EQ(statuses[0].sources, std::vector<std::string>{"nvml"});
  EXPECT_EQ(statuses[0].memory_total_bytes, 80LL << 30);
  EXPECT_EQ(statuses[2].memory_used_bytes, 3LL << 30);
  EXPECT_EQ(statuses[5].utilization_percent, 50);
  EXPECT_EQ(statuses[3].ecc_uncorrected, 2);
  EXPECT_EQ(statuses[3].ecc_corrected, 5);
  ASSERT_EQ(statuses[0].processes.size(), 2u);
  EXPECT_EQ(statuses[0].processes[0].pid, 1001);
  EXPECT_EQ(statuses[0].processes[1].used_memory_bytes, 512LL << 20);
  EXPECT_TRUE(statuses[1].processes.empty());
}

TEST(VendorRuntimeTest, KfdGivesAmdMemoryAndProcessesWithoutALibrary) {
  HostInfo host = DetectHost(FixtureRoots("mi300x-8"));
  std::vector<GpuLiveStatus> statuses = QueryLiveStatus(host, FixtureRoots("mi300x-8"), {"", "/nonexistent/amd"});
  ASSERT_EQ(statuses.size(), 8u);
  EXPECT_EQ(statuses[0].sources, std::vector<std::string>{"kfd"});
  EXPECT_EQ(statuses[0].memory_used_bytes, 3LL << 30);
  EXPECT_EQ(statuses[0].memory_total_bytes, 192LL << 30);
  ASSERT_EQ(statuses[0].processes.size(), 2u);
  EXPECT_EQ(statuses[0].processes[0].pid, 4242);
  EXPECT_EQ(statuses[0].processes[0].used_memory_bytes, 2LL << 30);
  ASSERT_EQ(statuses[1].processes.size(), 1u);
  EXPECT_EQ(statuses[1].processes[0].pid, 4242);
  EXPECT_TRUE(statuses[2].processes.empty());
}

}  // namespace
}  // namespace primus::platform
