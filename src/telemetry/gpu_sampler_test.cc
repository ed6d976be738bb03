#include "telemetry/gpu_sampler.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"

namespace primus::telemetry {
namespace {

TEST(GpuSamplerTest, AmdFromSysfs) {
  platform::Roots roots = platform::FixtureRoots("mi300x-8");
  GpuSampler sampler(platform::DetectHost(roots).gpus, roots, "/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(sampler.nvml_loaded());  // no NVIDIA GPU: never loaded
  std::vector<GpuStats> gpus = sampler.Sample();
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[0].vendor, "amd");
  EXPECT_EQ(gpus[0].bus_id, "0000:05:00.0");
  EXPECT_EQ(gpus[0].utilization_percent, 97);
  EXPECT_EQ(gpus[3].utilization_percent, 41);
  EXPECT_EQ(gpus[0].memory_used_bytes, 100LL << 30);
  EXPECT_EQ(gpus[0].memory_total_bytes, 192LL << 30);
  EXPECT_DOUBLE_EQ(*gpus[1].power_watts, 601.5);  // power1_average, µW
  EXPECT_EQ(gpus[2].temperature_c, 67);           // temp1_input, m°C
  EXPECT_EQ(gpus[1].clock_mhz, 2000);             // freq1_input, Hz
}

TEST(GpuSamplerTest, AmdFallsBackToPowerInputAndTheCurrentDpmLevel) {
  platform::Roots roots = platform::FixtureRoots("mi355x-8");
  GpuSampler sampler(platform::DetectHost(roots).gpus, roots);
  std::vector<GpuStats> gpus = sampler.Sample();
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_DOUBLE_EQ(*gpus[0].power_watts, 600.0);  // power1_input
  EXPECT_EQ(gpus[2].clock_mhz, 1920);              // "1: 1920Mhz *"
  EXPECT_EQ(gpus[0].memory_total_bytes, 288LL << 30);
}

TEST(GpuSamplerTest, AGpuWithoutTheFilesHasUnknownsOnly) {
  platform::Roots roots = platform::FixtureRoots("r9700-1");
  GpuSampler sampler(platform::DetectHost(roots).gpus, roots);
  std::vector<GpuStats> gpus = sampler.Sample();
  ASSERT_FALSE(gpus.empty());
  EXPECT_FALSE(gpus[0].utilization_percent);
  EXPECT_FALSE(gpus[0].power_watts);
  EXPECT_FALSE(gpus[0].clock_mhz);
}

TEST(GpuSamplerTest, NvidiaThroughNvml) {
  platform::Roots roots = platform::FixtureRoots("h100-8");
  GpuSampler sampler(platform::DetectHost(roots).gpus, roots, FAKE_NVML_PATH);
  EXPECT_TRUE(sampler.nvml_loaded());
  std::vector<GpuStats> gpus = sampler.Sample();
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[2].vendor, "nvidia");
  EXPECT_EQ(gpus[2].memory_used_bytes, 3LL << 30);
  EXPECT_EQ(gpus[2].memory_total_bytes, 80LL << 30);
  EXPECT_EQ(gpus[5].utilization_percent, 50);
  EXPECT_DOUBLE_EQ(*gpus[1].power_watts, 310.0);  // mW
  EXPECT_EQ(gpus[3].temperature_c, 43);
  EXPECT_EQ(gpus[4].clock_mhz, 1940);
  // A second sample uses the same open library.
  EXPECT_EQ(sampler.Sample()[5].utilization_percent, 50);
}

TEST(GpuSamplerTest, NvidiaWithoutNvmlHasUnknowns) {
  platform::Roots roots = platform::FixtureRoots("h100-8");
  GpuSampler sampler(platform::DetectHost(roots).gpus, roots, "/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(sampler.nvml_loaded());
  std::vector<GpuStats> gpus = sampler.Sample();
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_FALSE(gpus[0].utilization_percent);
  EXPECT_EQ(gpus[0].bus_id, "0000:18:00.0");
}

TEST(GpuSamplerTest, DpmLevels) {
  EXPECT_EQ(CurrentDpmLevelMhz("0: 500Mhz\n1: 2100Mhz *\n2: 2400Mhz\n"), 2100);
  EXPECT_FALSE(CurrentDpmLevelMhz("0: 500Mhz\n1: 2100Mhz\n"));
  EXPECT_FALSE(CurrentDpmLevelMhz(""));
}

}  // namespace
}  // namespace primus::telemetry
