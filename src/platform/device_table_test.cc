#include "platform/device_table.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace primus::platform {
namespace {

TEST(DeviceTableTest, KnowsTheDatacenterParts) {
  const KnownDevice* mi300x = FindKnownDevice(0x1002, 0x74a1);
  ASSERT_NE(mi300x, nullptr);
  EXPECT_EQ(mi300x->model, "MI300X");
  EXPECT_EQ(mi300x->arch, "gfx942");
  EXPECT_DOUBLE_EQ(mi300x->bf16_tflops, 1307.4);
  EXPECT_DOUBLE_EQ(mi300x->memory_gib, 192);
  EXPECT_EQ(FindKnownDevice(0x1002, 0x74a5)->model, "MI325X");
  EXPECT_EQ(FindKnownDevice(0x1002, 0x75a3)->arch, "gfx950");
  EXPECT_EQ(FindKnownDevice(0x1002, 0x7551)->model, "R9700");
  EXPECT_EQ(FindKnownDevice(0x10de, 0x2330)->arch, "sm90");
  EXPECT_DOUBLE_EQ(FindKnownDevice(0x10de, 0x2335)->hbm_tb_per_s, 4.8);
  EXPECT_EQ(FindKnownDevice(0x10de, 0x2901)->arch, "sm100");
  EXPECT_EQ(FindKnownDevice(0x10de, 0xffff), nullptr);
  EXPECT_EQ(FindKnownModel("mi355x")->device_id, 0x75a3);
}

TEST(DeviceTableTest, EveryIdIsListedOnceWithAnArchitecture) {
  std::set<std::pair<uint16_t, uint16_t>> seen;
  for (const KnownDevice& device : KnownDevices()) {
    EXPECT_TRUE(seen.insert({device.vendor_id, device.device_id}).second) << device.product;
    EXPECT_FALSE(device.arch.empty()) << device.product;
    EXPECT_TRUE(device.vendor == "amd" || device.vendor == "nvidia") << device.product;
  }
}

TEST(DeviceTableTest, GfxTargetNamesFollowLlvm) {
  EXPECT_EQ(GfxTargetName(90008), "gfx908");
  EXPECT_EQ(GfxTargetName(90010), "gfx90a");
  EXPECT_EQ(GfxTargetName(90402), "gfx942");
  EXPECT_EQ(GfxTargetName(90500), "gfx950");
  EXPECT_EQ(GfxTargetName(120001), "gfx1201");
  EXPECT_EQ(GfxTargetName(0), "");
}

TEST(DeviceTableTest, NewNvidiaPartsGetTheirArchitectureFromTheIdRange) {
  EXPECT_EQ(NvidiaArchFromDeviceId(0x2321), "sm90");  // H100 NVL, not in the table
  EXPECT_EQ(NvidiaArchFromDeviceId(0x29ff), "sm100");
  EXPECT_EQ(NvidiaArchFromDeviceId(0x2684), "");  // a consumer Ada part
}

}  // namespace
}  // namespace primus::platform
