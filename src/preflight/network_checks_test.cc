#include "preflight/network_checks.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"

namespace primus::preflight {
namespace {

platform::HostInfo Host(const std::string& fixture) { return platform::DetectHost(platform::FixtureRoots(fixture)); }

const CheckResult* Named(const std::vector<CheckResult>& results, const std::string& name) {
  for (const CheckResult& r : results) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(NetworkChecksTest, IfnameSyntaxPrefixesExactAndExclude) {
  platform::HostInfo host = Host("h200-8");
  EXPECT_EQ(SelectInterfaces(host, "eth"), (std::vector<std::string>{"eth1", "eth10"}));
  EXPECT_EQ(SelectInterfaces(host, "=eth1"), (std::vector<std::string>{"eth1"}));
  std::vector<std::string> excluded = SelectInterfaces(host, "^lo,enp");
  EXPECT_EQ(excluded, (std::vector<std::string>{"eth1", "eth10"}));
}

TEST(NetworkChecksTest, AMissingInterfaceFailsNamingWhatExists) {
  NetworkSettings settings;
  settings.env["NCCL_SOCKET_IFNAME"] = "ib0";
  settings.env["GLOO_SOCKET_IFNAME"] = "eth1";
  std::vector<CheckResult> results = CheckNetwork(Host("h200-8"), settings);
  const CheckResult* nccl = Named(results, "NCCL_SOCKET_IFNAME");
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->status, CheckStatus::kFail);
  EXPECT_NE(nccl->fix.find("eth1"), std::string::npos) << nccl->fix;
  EXPECT_EQ(Named(results, "GLOO_SOCKET_IFNAME")->status, CheckStatus::kPass);
  // Without GPUs NCCL is not used: the same mistake only warns; gloo's still fails.
  settings.env["GLOO_SOCKET_IFNAME"] = "ib0";
  results = CheckNetwork(Host("cpu-only"), settings);
  EXPECT_EQ(Named(results, "NCCL_SOCKET_IFNAME")->status, CheckStatus::kWarn);
  EXPECT_EQ(Named(results, "GLOO_SOCKET_IFNAME")->status, CheckStatus::kFail);
}

TEST(NetworkChecksTest, DownIbPortFailsAndRocePortsNeedAGid) {
  std::vector<CheckResult> results = CheckNetwork(Host("h200-8"), {});
  const CheckResult* down = Named(results, "rdma mlx5_3:1");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->status, CheckStatus::kFail);
  EXPECT_EQ(down->value, "DOWN Polling (InfiniBand)");
  // NCCL_IB_HCA leaving the bad port out: no failure for it.
  NetworkSettings only_good;
  only_good.env["NCCL_IB_HCA"] = "mlx5_0,mlx5_1";
  EXPECT_EQ(Named(CheckNetwork(Host("h200-8"), only_good), "rdma mlx5_3:1"), nullptr);
  // The healthy MI300X host: every RoCE port active with a v2 GID.
  EXPECT_EQ(Worst(CheckNetwork(Host("mi300x-8"), {})), CheckStatus::kPass);
}

TEST(NetworkChecksTest, MasterAddrResolvesAndPortTakenOnNodeZero) {
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  NetworkSettings settings;
  settings.nnodes = 2;
  settings.master_addr = "no-such-host.invalid";
  settings.master_port = ntohs(address.sin_port);
  std::vector<CheckResult> results = CheckNetwork(Host("cpu-only"), settings);
  EXPECT_EQ(Named(results, "MASTER_ADDR")->status, CheckStatus::kFail);
  EXPECT_EQ(Named(results, "MASTER_PORT")->status, CheckStatus::kFail);
  ::close(holder);
  settings.master_addr = "127.0.0.1";
  results = CheckNetwork(Host("cpu-only"), settings);
  EXPECT_EQ(Named(results, "MASTER_ADDR")->status, CheckStatus::kPass);
  EXPECT_EQ(Named(results, "MASTER_PORT")->status, CheckStatus::kPass);
  settings.node_rank = 1;  // only node 0 needs the port free
  EXPECT_EQ(Named(CheckNetwork(Host("cpu-only"), settings), "MASTER_PORT"), nullptr);
}

}  // namespace
}  // namespace primus::preflight
