#include "platform/visible_devices.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

class VisibleDevicesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    amd_ = new HostInfo(DetectHost(FixtureRoots("mi300x-8")));
    nvidia_ = new HostInfo(DetectHost(FixtureRoots("h100-8")));
  }
  static void TearDownTestSuite() {
    delete amd_;
    delete nvidia_;
  }
  static HostInfo* amd_;
  static HostInfo* nvidia_;
};
HostInfo* VisibleDevicesTest::amd_ = nullptr;
HostInfo* VisibleDevicesTest::nvidia_ = nullptr;

TEST_F(VisibleDevicesTest, EverythingIsVisibleByDefault) {
  EXPECT_EQ(CountVisibleGpus(*amd_, {}), 8);
  EXPECT_EQ(CountVisibleGpus(*nvidia_, {}), 8);
  EXPECT_EQ(AutoProcessesPerNode(*amd_, {}), 8);
}

TEST_F(VisibleDevicesTest, CudaVisibleDevicesOnNvidia) {
  EXPECT_EQ(VisibleGpuIndices(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(VisibleGpuIndices(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "3,1"}}), (std::vector<int>{3, 1}));
  // A worker's GPU, for the hang's culprit: local rank 1 uses the second visible one.
  std::string second = GpuOfLocalRank(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "3,1"}}, 1);
  EXPECT_TRUE(second.starts_with("GPU 1 (0000:")) << second;
  EXPECT_TRUE(GpuOfLocalRank(*nvidia_, {}, 7).starts_with("GPU 7 (")) << GpuOfLocalRank(*nvidia_, {}, 7);
  EXPECT_EQ(GpuOfLocalRank(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "3,1"}}, 2), "") << "past the visible ones";
  EXPECT_EQ(GpuOfLocalRank(HostInfo{}, {}, 0), "") << "a host without GPUs";
  // A UUID, or a unique prefix of one, names a GPU.
  EXPECT_EQ(VisibleGpuIndices(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "GPU-6e2c1d5f-1002"}}), (std::vector<int>{2}));
  // As in CUDA, the list ends at the first entry that names no GPU.
  EXPECT_EQ(VisibleGpuIndices(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "0,9,1"}}), (std::vector<int>{0}));
  EXPECT_EQ(CountVisibleGpus(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "-1"}}), 0);
  EXPECT_EQ(CountVisibleGpus(*nvidia_, {{"CUDA_VISIBLE_DEVICES", ""}}), 0);
  // An ambiguous UUID prefix names no GPU.
  EXPECT_EQ(CountVisibleGpus(*nvidia_, {{"CUDA_VISIBLE_DEVICES", "GPU-6e2c"}}), 0);
  // HIP's variables mean nothing to CUDA.
  EXPECT_EQ(CountVisibleGpus(*nvidia_, {{"HIP_VISIBLE_DEVICES", "0"}}), 8);
}

TEST_F(VisibleDevicesTest, RocrThenHipOnAmd) {
  EXPECT_EQ(VisibleGpuIndices(*amd_, {{"HIP_VISIBLE_DEVICES", "0,2"}}), (std::vector<int>{0, 2}));
  EXPECT_EQ(VisibleGpuIndices(*amd_, {{"ROCR_VISIBLE_DEVICES", "GPU-1b6d61638a86f805,6,7"}}),
            (std::vector<int>{5, 6, 7}));
  // HIP indexes into what ROCR left visible.
  EXPECT_EQ(VisibleGpuIndices(*amd_, {{"ROCR_VISIBLE_DEVICES", "4,5,6,7"}, {"HIP_VISIBLE_DEVICES", "1,3"}}),
            (std::vector<int>{5, 7}));
  // HIP honours CUDA_VISIBLE_DEVICES when HIP_VISIBLE_DEVICES is not set ...
  EXPECT_EQ(CountVisibleGpus(*amd_, {{"CUDA_VISIBLE_DEVICES", "0,1"}}), 2);
  // ... and HIP_VISIBLE_DEVICES wins when both are.
  EXPECT_EQ(CountVisibleGpus(*amd_, {{"CUDA_VISIBLE_DEVICES", "0,1"}, {"HIP_VISIBLE_DEVICES", "0,1,2"}}), 3);
}

TEST_F(VisibleDevicesTest, NoGpusMeansOneProcess) {
  HostInfo cpu = DetectHost(FixtureRoots("cpu-only"));
  EXPECT_EQ(CountVisibleGpus(cpu, {}), 0);
  EXPECT_EQ(AutoProcessesPerNode(cpu, {}), 1);
  EXPECT_EQ(AutoProcessesPerNode(*amd_, {{"HIP_VISIBLE_DEVICES", ""}}), 1);
}

}  // namespace
}  // namespace primus::platform
