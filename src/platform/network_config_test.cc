#include "platform/network_config.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/routing.h"
#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

std::map<std::string, std::string> Settings(const NetworkPlan& plan) {
  std::map<std::string, std::string> settings;
  for (const NetworkSetting& setting : plan.settings) settings[setting.name] = setting.value;
  return settings;
}

TEST(NetworkConfigTest, Mi300xRoceRails) {
  HostInfo host = DetectHost(FixtureRoots("mi300x-8"));
  NetworkPlan plan = AutoConfigureNetwork(host, "10.10.0.2", 4);
  auto settings = Settings(plan);
  // The interface *name* that routes to the master, never its address.
  EXPECT_EQ(settings["NCCL_SOCKET_IFNAME"], "enp193s0f0");
  EXPECT_EQ(settings["GLOO_SOCKET_IFNAME"], "enp193s0f0");
  EXPECT_EQ(settings["NCCL_IB_HCA"], "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1");
  EXPECT_EQ(settings["NCCL_IB_GID_INDEX"], "3");
  EXPECT_EQ(settings.count("NCCL_IB_DISABLE"), 0u);
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(NetworkConfigTest, Mi355xGidIndexIsDetectedNotAssumed) {
  HostInfo host = DetectHost(FixtureRoots("mi355x-8"));
  auto settings = Settings(AutoConfigureNetwork(host, "172.16.1.10", 2));
  EXPECT_EQ(settings["NCCL_IB_GID_INDEX"], "5");
  EXPECT_EQ(settings["NCCL_SOCKET_IFNAME"], "eno1np0");
  EXPECT_EQ(settings["NCCL_IB_HCA"].substr(0, 11), "bnxt_re0:1,");
}

TEST(NetworkConfigTest, InfinibandComputePortsWinOverEthernetStoragePorts) {
  HostInfo host = DetectHost(FixtureRoots("h100-8"));
  auto settings = Settings(AutoConfigureNetwork(host, "10.20.0.1", 2));
  EXPECT_EQ(settings["NCCL_IB_HCA"], "mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1");
  EXPECT_EQ(settings.count("NCCL_IB_GID_INDEX"), 0u);  // InfiniBand needs no GID index
  EXPECT_EQ(settings["NCCL_SOCKET_IFNAME"], "enp192s0f0");
}

TEST(NetworkConfigTest, PrefixTrapsGetExactNames) {
  HostInfo host = DetectHost(FixtureRoots("h200-8"));
  auto settings = Settings(AutoConfigureNetwork(host, "10.30.0.1", 2));
  // mlx5_3 is down; mlx5_1 would also select the unused mlx5_10 and mlx5_11.
  EXPECT_EQ(settings["NCCL_IB_HCA"], "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1");
  // eth1 would also select eth10 for NCCL; gloo takes exact names anyway.
  EXPECT_EQ(settings["NCCL_SOCKET_IFNAME"], "=eth1");
  EXPECT_EQ(settings["GLOO_SOCKET_IFNAME"], "eth1");
}

TEST(NetworkConfigTest, NoRdmaMeansSockets) {
  HostInfo host = DetectHost(FixtureRoots("r9700-1"));
  NetworkPlan plan = AutoConfigureNetwork(host, "", 1);
  auto settings = Settings(plan);
  EXPECT_EQ(settings["NCCL_IB_DISABLE"], "1");
  EXPECT_EQ(settings.count("NCCL_IB_HCA"), 0u);
  // A single-node job without MASTER_ADDR talks over loopback.
  EXPECT_EQ(settings["NCCL_SOCKET_IFNAME"], "lo");
}

TEST(NetworkConfigTest, LoopbackOnlyForSingleNodeJobs) {
  HostInfo host = DetectHost(FixtureRoots("cpu-only"));
  EXPECT_EQ(Settings(AutoConfigureNetwork(host, "127.0.0.1", 1))["NCCL_SOCKET_IFNAME"], "lo");
  EXPECT_EQ(Settings(AutoConfigureNetwork(host, "localhost", 1))["GLOO_SOCKET_IFNAME"], "lo");
  NetworkPlan multi = AutoConfigureNetwork(host, "localhost", 2);
  EXPECT_EQ(Settings(multi).count("NCCL_SOCKET_IFNAME"), 0u);
  ASSERT_EQ(multi.warnings.size(), 1u);
  EXPECT_NE(multi.warnings[0].find("loopback address in a 2-node job"), std::string::npos);
  NetworkPlan no_master = AutoConfigureNetwork(host, "", 3);
  EXPECT_EQ(Settings(no_master).count("NCCL_SOCKET_IFNAME"), 0u);
  EXPECT_NE(no_master.warnings[0].find("MASTER_ADDR is not set"), std::string::npos);
}

TEST(NetworkConfigTest, AnUnresolvableMasterIsReportedNotGuessed) {
  HostInfo host = DetectHost(FixtureRoots("cpu-only"));
  NetworkPlan plan = AutoConfigureNetwork(host, "master.invalid", 2);
  EXPECT_EQ(Settings(plan).count("NCCL_SOCKET_IFNAME"), 0u);
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_NE(plan.warnings[0].find("master.invalid"), std::string::npos);
}

TEST(NetworkConfigTest, ADownInterfaceTowardsTheMasterIsFlagged) {
  HostInfo host = DetectHost(FixtureRoots("h200-8"));
  host.routes.push_back({"enp156s0np0", ResolveIpv4("10.50.8.0").value(), 0, ResolveIpv4("255.255.255.0").value(), 1, 0});
  NetworkPlan plan = AutoConfigureNetwork(host, "10.50.8.9", 2);
  EXPECT_EQ(Settings(plan)["NCCL_SOCKET_IFNAME"], "enp156s0np0");
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_NE(plan.warnings[0].find("is down"), std::string::npos);
}

}  // namespace
}  // namespace primus::platform
