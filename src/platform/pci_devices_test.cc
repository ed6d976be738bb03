#include "platform/pci_devices.h"

#include <gtest/gtest.h>

#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

TEST(PciDevicesTest, BusIdFromKfdLocation) {
  EXPECT_EQ(BusIdFromLocation(0, 0x0500), "0000:05:00.0");
  EXPECT_EQ(BusIdFromLocation(0, 0x050b), "0000:05:01.3");
  EXPECT_EQ(BusIdFromLocation(1, 0x7500), "0001:75:00.0");
}

TEST(PciDevicesTest, NormalizesBusIdsFromDifferentSources) {
  EXPECT_EQ(NormalizeBusId("00000000:18:00.0"), "0000:18:00.0");  // NVML's 8-digit domain
  EXPECT_EQ(NormalizeBusId("0000:DB:00.0\n"), "0000:db:00.0");
  EXPECT_EQ(NormalizeBusId("0000:18:00.0"), "0000:18:00.0");
}

TEST(PciDevicesTest, ScanFindsAcceleratorsAndSkipsEverythingElse) {
  Diagnostics diagnostics;
  std::vector<PciDevice> devices = ScanPciAccelerators(FixtureRoots("mi300x-8"), diagnostics);
  EXPECT_TRUE(diagnostics.warnings().empty());
  ASSERT_EQ(devices.size(), 8u);  // not the host bridge, NVMe drive or any NIC
  EXPECT_EQ(devices[0].bus_id, "0000:05:00.0");
  EXPECT_EQ(devices[0].class_code, 0x120000u);
  EXPECT_EQ(devices[0].current_link_width, 16);
  EXPECT_EQ(devices[4].numa_node, 1);
  // A VGA-class R9700 counts; its HDMI audio function does not.
  std::vector<PciDevice> desktop = ScanPciAccelerators(FixtureRoots("r9700-1"), diagnostics);
  ASSERT_EQ(desktop.size(), 1u);
  EXPECT_EQ(desktop[0].device_id, 0x7551);
  // A VM's emulated VGA adapter is no accelerator.
  EXPECT_TRUE(ScanPciAccelerators(FixtureRoots("cpu-only"), diagnostics).empty());
}

TEST(PciDevicesTest, ReadsOneFunctionByAddress) {
  PciDevice nic = ReadPciDevice(FixtureRoots("h100-8"), "0000:1a:00.0");
  EXPECT_EQ(nic.vendor_id, 0x15b3);
  EXPECT_EQ(nic.class_code, 0x020700u);  // InfiniBand controller
  EXPECT_EQ(nic.driver, "mlx5_core");
  EXPECT_TRUE(ReadPciDevice(FixtureRoots("h100-8"), "0000:ff:00.0").bus_id.empty());
}

}  // namespace
}  // namespace primus::platform
