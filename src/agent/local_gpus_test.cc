#include "agent/local_gpus.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "agent/agent_test_util.h"
#include "util/files.h"

namespace primus::agent {
namespace {

TEST(LocalGpusTest, CountsNvidiaThenKfdDevices) {
  testing::ScopedTempDir scratch("gpus");
  const std::string& root = scratch.path();
  EXPECT_EQ(CountGpuDevices(root), 0);
  for (const char* node : {"0", "1", "2"}) {
    std::string dir = root + "/sys/class/kfd/kfd/topology/nodes/" + node;
    ASSERT_TRUE(MakeDirs(dir).ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/gpu_id", node[0] == '0' ? "0\n" : "4660\n").ok());  // node 0 is the CPU
  }
  EXPECT_EQ(CountGpuDevices(root), 2);
  ASSERT_TRUE(MakeDirs(root + "/proc/driver/nvidia/gpus/0000:17:00.0").ok());
  EXPECT_EQ(CountGpuDevices(root), 1);
}

TEST(LocalGpusTest, VisibleDevicesVariableWins) {
  setenv("CUDA_VISIBLE_DEVICES", "0,3,5", 1);
  EXPECT_EQ(CountVisibleGpus(), 3);
  EXPECT_EQ(*ResolveNprocPerNode("auto"), 3);
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  EXPECT_EQ(CountVisibleGpus(), 0);
  EXPECT_EQ(*ResolveNprocPerNode("auto"), 1);  // no GPU: one worker
  unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST(LocalGpusTest, ResolvesNumbersAndRejectsTheRest) {
  EXPECT_EQ(*ResolveNprocPerNode("8"), 8);
  EXPECT_GE(*ResolveNprocPerNode("cpu"), 1);
  for (const char* bad : {"0", "-2", "eight", ""}) {
    auto nproc = ResolveNprocPerNode(bad);
    ASSERT_FALSE(nproc.ok()) << bad;
    EXPECT_EQ(nproc.error().code, ExitCode::kUsage);
  }
}

}  // namespace
}  // namespace primus::agent
