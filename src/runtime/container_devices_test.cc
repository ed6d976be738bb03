#include "runtime/container_devices.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

TEST(ContainerDevicesTest, NothingOnACpuHost) {
  ScopedTempDir dev("dev");
  GpuDevices devices = FindGpuDevices(platform::HostInfo{}, dev.path());
  EXPECT_EQ(devices.vendor, "");
  EXPECT_TRUE(devices.present.empty());
}

TEST(ContainerDevicesTest, AmdDeviceFilesAndTheirGroups) {
  ScopedTempDir dev("dev");
  ASSERT_TRUE(WriteFileAtomic(dev.path() + "/kfd", "").ok());
  ASSERT_TRUE(MakeDirs(dev.path() + "/dri").ok());
  ASSERT_TRUE(WriteFileAtomic(dev.path() + "/dri/renderD128", "").ok());
  ASSERT_TRUE(MakeDirs(dev.path() + "/infiniband").ok());
  ASSERT_EQ(chown((dev.path() + "/kfd").c_str(), -1, 44), 0);
  ASSERT_EQ(chown((dev.path() + "/dri/renderD128").c_str(), -1, 109), 0);
  platform::HostInfo host;
  host.gpus.push_back(platform::GpuInfo{});
  host.gpus[0].vendor = "amd";
  GpuDevices devices = FindGpuDevices(host, dev.path());
  EXPECT_EQ(devices.vendor, "amd");
  EXPECT_EQ(devices.present, (std::vector<std::string>{"/dev/kfd", "/dev/dri", "/dev/infiniband"}));
  EXPECT_EQ(devices.group_ids, (std::vector<unsigned>{44, 109}));
}

TEST(ContainerDevicesTest, VendorFromDeviceFilesWhenDetectionFoundNoGpu) {
  ScopedTempDir dev("dev");
  ASSERT_TRUE(WriteFileAtomic(dev.path() + "/nvidiactl", "").ok());
  EXPECT_EQ(FindGpuDevices(platform::HostInfo{}, dev.path()).vendor, "nvidia");
}

}  // namespace
}  // namespace primus::runtime
