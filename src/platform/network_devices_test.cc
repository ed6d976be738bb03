#include "platform/network_devices.h"

#include <gtest/gtest.h>

#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

TEST(NetworkDevicesTest, RoceV2GidIndexIsTheIpv4Entry) {
  Diagnostics diagnostics;
  std::vector<IbPort> mi300x = DetectIbPorts(FixtureRoots("mi300x-8"), diagnostics);
  ASSERT_EQ(mi300x.size(), 8u);
  EXPECT_EQ(mi300x[0].device, "mlx5_0");
  EXPECT_TRUE(mi300x[0].active());
  EXPECT_TRUE(mi300x[0].is_roce());
  EXPECT_EQ(mi300x[0].roce_v2_gid_index, 3);  // link-local v1/v2 at 0/1, IPv4 v1/v2 at 2/3
  EXPECT_EQ(mi300x[0].netdev, "enp12s0np0");
  EXPECT_EQ(mi300x[0].pci_bus_id, "0000:0c:00.0");
  EXPECT_EQ(mi300x[7].numa_node, 1);
  EXPECT_DOUBLE_EQ(mi300x[0].rate_gbps, 400);
  // With a global IPv6 address on the netdev, the IPv4 RoCE v2 GID moves to 5.
  std::vector<IbPort> mi355x = DetectIbPorts(FixtureRoots("mi355x-8"), diagnostics);
  ASSERT_EQ(mi355x.size(), 8u);
  EXPECT_EQ(mi355x[0].device, "bnxt_re0");
  EXPECT_EQ(mi355x[0].roce_v2_gid_index, 5);
  EXPECT_TRUE(diagnostics.warnings().empty());
}

TEST(NetworkDevicesTest, InfinibandPortsInNaturalOrder) {
  Diagnostics diagnostics;
  std::vector<IbPort> ports = DetectIbPorts(FixtureRoots("h200-8"), diagnostics);
  ASSERT_EQ(ports.size(), 12u);
  EXPECT_EQ(ports[2].device, "mlx5_2");
  EXPECT_EQ(ports[10].device, "mlx5_10");
  EXPECT_EQ(ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(ports[0].roce_v2_gid_index, -1);
  EXPECT_EQ(ports[3].state, "DOWN");
  EXPECT_EQ(ports[3].phys_state, "Polling");
  EXPECT_FALSE(ports[3].active());
}

TEST(NetworkDevicesTest, DamagedPortFilesDegrade) {
  Diagnostics diagnostics;
  std::vector<IbPort> ports = DetectIbPorts(FixtureRoots("broken-amd"), diagnostics);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_FALSE(ports[0].active());  // no state file: not used, with a warning
  EXPECT_TRUE(ports[1].active());
  EXPECT_DOUBLE_EQ(ports[1].rate_gbps, 0);  // "fast"
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_NE(diagnostics.warnings()[0].find("mlx5_0/ports/1/state"), std::string::npos);
}

TEST(NetworkDevicesTest, InterfacesFromSysClassNet) {
  Diagnostics diagnostics;
  std::vector<NetInterface> interfaces = DetectInterfaces(FixtureRoots("cpu-only"), diagnostics);
  ASSERT_EQ(interfaces.size(), 4u);
  EXPECT_EQ(interfaces[0].name, "eth0");
  EXPECT_EQ(interfaces[0].operstate, "up");
  EXPECT_EQ(interfaces[0].speed_mbps, 10000);
  EXPECT_TRUE(interfaces[0].virtual_device);
  EXPECT_TRUE(interfaces[0].ipv4.empty());  // fixture trees have no live addresses
  EXPECT_EQ(interfaces[3].name, "lo");
  EXPECT_TRUE(interfaces[3].loopback);
  std::vector<NetInterface> desktop = DetectInterfaces(FixtureRoots("r9700-1"), diagnostics);
  ASSERT_EQ(desktop.size(), 3u);
  EXPECT_FALSE(desktop[0].virtual_device);  // enp6s0 has a PCI device
  EXPECT_EQ(desktop[2].name, "wlp7s0");
  EXPECT_EQ(desktop[2].speed_mbps, -1);  // link down: speed unreadable, not an error
  EXPECT_TRUE(diagnostics.warnings().empty());
}

TEST(NetworkDevicesTest, RateAndStateText) {
  EXPECT_DOUBLE_EQ(ParseIbRateGbps("400 Gb/sec (4X NDR)"), 400);
  EXPECT_DOUBLE_EQ(ParseIbRateGbps("12.5 Gb/sec (1X FDR)"), 12.5);
  EXPECT_DOUBLE_EQ(ParseIbRateGbps(""), 0);
  EXPECT_EQ(IbStateName("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(IbStateName("5: LinkUp"), "LinkUp");
}

}  // namespace
}  // namespace primus::platform
