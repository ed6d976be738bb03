// Route-based interface choice against real interfaces: two network
// namespaces joined by a veth pair stand for two nodes. Node A has eth1
// (10.201.77.1/24, towards node B at .2, default route through B) and eth10
// (10.202.0.1/24): the eth1/eth10 pair is the prefix trap NCCL falls into.
//
// The outer tests (NetnsTest) build the namespaces and run this same binary
// inside node A with `ip netns exec`, which gives it that namespace's /sys
// and /proc/net; the inner tests (NetnsInside) do the checking there and
// skip when run any other way. Needs root and iproute2; skipped otherwise.
// ctest labels: netns, slow.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

#include "platform/host_detect.h"
#include "platform/network_config.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

bool RunCommand(const std::string& command) {
  int status = std::system(command.c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool RunQuietly(const std::string& command) { return RunCommand(command + " >/dev/null 2>&1"); }

std::string NodeA() { return "primus-test-" + std::to_string(getpid()) + "-a"; }
std::string NodeB() { return "primus-test-" + std::to_string(getpid()) + "-b"; }

class NetnsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("PRIMUS_NETNS_INSIDE")) return;
    if (geteuid() != 0 || !RunQuietly("ip netns list")) {
      skip_reason_ = "needs root and `ip netns` (iproute2)";
      return;
    }
    std::string a = NodeA(), b = NodeB();
    bool ok = RunQuietly("ip netns add " + a) && RunQuietly("ip netns add " + b) &&
              RunQuietly("ip link add veth-a netns " + a + " type veth peer name veth-b netns " + b) &&
              RunQuietly("ip -n " + a + " link set veth-a name eth1") && RunQuietly("ip -n " + b + " link set veth-b name eth0") &&
              RunQuietly("ip -n " + a + " link add eth10 type veth peer name peer10") &&
              RunQuietly("ip -n " + a + " addr add 10.201.77.1/24 dev eth1") &&
              RunQuietly("ip -n " + b + " addr add 10.201.77.2/24 dev eth0") &&
              RunQuietly("ip -n " + a + " addr add 10.202.0.1/24 dev eth10");
    for (const char* link : {"lo", "eth1", "eth10", "peer10"}) ok = ok && RunQuietly("ip -n " + a + " link set " + link + " up");
    for (const char* link : {"lo", "eth0"}) ok = ok && RunQuietly("ip -n " + b + " link set " + link + " up");
    ok = ok && RunQuietly("ip -n " + a + " route add default via 10.201.77.2 dev eth1");
    if (!ok) skip_reason_ = "could not build the test namespaces (veth support?)";
    created_ = true;
  }
  static void TearDownTestSuite() {
    if (!created_) return;
    RunQuietly("ip netns del " + NodeA());
    RunQuietly("ip netns del " + NodeB());
  }
  void SetUp() override {
    if (std::getenv("PRIMUS_NETNS_INSIDE")) GTEST_SKIP() << "inside a namespace already";
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }
  // Runs NetnsInside.<test> in node A; true when it passed.
  static bool Inside(const std::string& test) {
    char self[4096] = {};
    ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (length <= 0) return false;
    // Not quiet: when an inner check fails, its message is the test's output.
    return RunCommand("ip netns exec " + NodeA() + " env PRIMUS_NETNS_INSIDE=1 " + std::string(self, static_cast<size_t>(length)) +
               " --gtest_filter=NetnsInside." + test);
  }
  static inline std::string skip_reason_;
  static inline bool created_ = false;
};

TEST_F(NetnsTest, DetectionSeesTheNamespacesInterfacesAndAddresses) { EXPECT_TRUE(Inside("Detection")); }
TEST_F(NetnsTest, TheRouteToAPeerPicksItsInterfaceByName) { EXPECT_TRUE(Inside("PeerOnTheSameSubnet")); }
TEST_F(NetnsTest, TheMastersOwnAddressIsItsInterfaceNotLoopback) { EXPECT_TRUE(Inside("OwnAddress")); }
TEST_F(NetnsTest, ASecondSubnetAndTheDefaultRoute) { EXPECT_TRUE(Inside("OtherRoutes")); }
TEST_F(NetnsTest, LoopbackForASingleNodeJob) { EXPECT_TRUE(Inside("SingleNode")); }

class NetnsInside : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::getenv("PRIMUS_NETNS_INSIDE")) GTEST_SKIP() << "runs only inside the test namespace";
    host_ = DetectHost(Roots{});
  }
  std::map<std::string, std::string> Settings(const std::string& master, int nnodes) {
    NetworkPlan plan = AutoConfigureNetwork(host_, master, nnodes);
    std::map<std::string, std::string> settings;
    for (const NetworkSetting& setting : plan.settings) settings[setting.name] = setting.value;
    for (const std::string& note : plan.notes) settings["note"] += note + "\n";
    return settings;
  }
  HostInfo host_;
};

TEST_F(NetnsInside, Detection) {
  std::vector<std::string> names;
  for (const NetInterface& interface : host_.interfaces) names.push_back(interface.name);
  EXPECT_EQ(Join(names, ","), "eth1,eth10,lo,peer10");
  const NetInterface* eth1 = host_.FindInterface("eth1");
  ASSERT_NE(eth1, nullptr);
  ASSERT_EQ(eth1->ipv4.size(), 1u);
  EXPECT_EQ(eth1->operstate, "up");
  EXPECT_TRUE(eth1->virtual_device);
  EXPECT_FALSE(host_.routes.empty());
}

TEST_F(NetnsInside, PeerOnTheSameSubnet) {
  auto settings = Settings("10.201.77.2", 2);
  EXPECT_EQ(settings["NCCL_SOCKET_IFNAME"], "=eth1");  // eth1 alone would also select eth10
  EXPECT_EQ(settings["GLOO_SOCKET_IFNAME"], "eth1");
  EXPECT_NE(settings["note"].find("route 10.201.77.0/24"), std::string::npos) << settings["note"];
  EXPECT_EQ(settings["NCCL_IB_DISABLE"], "1");
}

TEST_F(NetnsInside, OwnAddress) {
  auto settings = Settings("10.201.77.1", 2);
  EXPECT_EQ(settings["GLOO_SOCKET_IFNAME"], "eth1");
  EXPECT_NE(settings["note"].find("local address"), std::string::npos) << settings["note"];
}

TEST_F(NetnsInside, OtherRoutes) {
  EXPECT_EQ(Settings("10.202.0.9", 2)["NCCL_SOCKET_IFNAME"], "eth10");
  auto settings = Settings("192.0.2.50", 2);  // reached through the default route
  EXPECT_EQ(settings["GLOO_SOCKET_IFNAME"], "eth1");
  EXPECT_NE(settings["note"].find("default route"), std::string::npos) << settings["note"];
}

TEST_F(NetnsInside, SingleNode) {
  EXPECT_EQ(Settings("", 1)["NCCL_SOCKET_IFNAME"], "lo");
  EXPECT_EQ(Settings("localhost", 1)["GLOO_SOCKET_IFNAME"], "lo");
  EXPECT_EQ(Settings("127.0.0.1", 2).count("NCCL_SOCKET_IFNAME"), 0u);  // never loopback across nodes
}

}  // namespace
}  // namespace primus::platform
