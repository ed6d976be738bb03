#include "platform/routing.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

uint32_t Ip(const char* text) { return ResolveIpv4(text).value(); }

HostInfo RoutedHost(const std::string& fixture) {
  Diagnostics diagnostics;
  HostInfo host;
  host.routes = ReadRoutes(FixtureRoots(fixture), diagnostics);
  host.interfaces.push_back({"lo", "unknown", "", -1, 65536, true, true, {{Ip("127.0.0.1"), Ip("255.0.0.0")}}});
  return host;
}

TEST(RoutingTest, ParsesTheKernelTableInHostByteOrder) {
  Diagnostics diagnostics;
  std::vector<RouteEntry> routes = ReadRoutes(FixtureRoots("mi300x-8"), diagnostics);
  ASSERT_EQ(routes.size(), 10u);
  EXPECT_EQ(routes[0].interface, "enp193s0f0");
  EXPECT_EQ(FormatIpv4(routes[0].gateway), "10.10.0.1");
  EXPECT_EQ(routes[0].mask, 0u);
  EXPECT_EQ(FormatIpv4(routes[1].destination), "10.10.0.0");
  EXPECT_EQ(FormatIpv4(routes[1].mask), "255.255.0.0");
  EXPECT_EQ(routes[1].metric, 100);
  EXPECT_TRUE(diagnostics.warnings().empty());
}

TEST(RoutingTest, MalformedRowsAreSkippedWithAWarning) {
  Diagnostics diagnostics;
  std::vector<RouteEntry> routes = ReadRoutes(FixtureRoots("broken-amd"), diagnostics);
  EXPECT_EQ(routes.size(), 1u);
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_NE(diagnostics.warnings()[0].find("1 malformed route"), std::string::npos);
  ReadRoutes(FixtureRoots("broken-nvidia"), diagnostics);  // no route file at all
  EXPECT_EQ(diagnostics.warnings().size(), 2u);
}

TEST(RoutingTest, LongestPrefixWinsOverTheDefaultRoute) {
  HostInfo host = RoutedHost("mi300x-8");
  EXPECT_EQ(InterfaceForAddress(host, Ip("10.10.4.2")).interface, "enp193s0f0");
  EXPECT_EQ(InterfaceForAddress(host, Ip("10.10.4.2")).reason, "route 10.10.0.0/16");
  EXPECT_EQ(InterfaceForAddress(host, Ip("192.168.3.40")).interface, "enp106s0np0");  // rail 3
  EXPECT_EQ(InterfaceForAddress(host, Ip("8.8.8.8")).reason, "default route");
  EXPECT_EQ(InterfaceForAddress(host, Ip("127.0.0.1")).interface, "lo");
  EXPECT_EQ(InterfaceForAddress(host, Ip("127.0.0.1")).reason, "loopback");
}

TEST(RoutingTest, LowerMetricBreaksTies) {
  HostInfo host;
  host.routes.push_back({"slow0", Ip("10.1.0.0"), 0, Ip("255.255.0.0"), 1, 200});
  host.routes.push_back({"fast0", Ip("10.1.0.0"), 0, Ip("255.255.0.0"), 1, 10});
  host.routes.push_back({"down0", Ip("10.1.2.0"), 0, Ip("255.255.255.0"), 0, 0});  // not RTF_UP
  EXPECT_EQ(InterfaceForAddress(host, Ip("10.1.2.3")).interface, "fast0");
}

TEST(RoutingTest, AnAddressOfThisHostIsReachedThroughItsOwnInterface) {
  // On the master node MASTER_ADDR is local: the kernel would say "lo", but
  // the other nodes reach it through the interface that holds the address.
  HostInfo host = RoutedHost("mi300x-8");
  host.interfaces.push_back({"enp193s0f0", "up", "", 100000, 1500, false, false, {{Ip("10.10.0.15"), Ip("255.255.0.0")}}});
  RouteChoice choice = InterfaceForAddress(host, Ip("10.10.0.15"));
  EXPECT_EQ(choice.interface, "enp193s0f0");
  EXPECT_EQ(choice.reason, "local address");
}

TEST(RoutingTest, NoRouteIsAnEmptyAnswer) {
  HostInfo host;
  EXPECT_EQ(InterfaceForAddress(host, Ip("10.0.0.1")).interface, "");
}

TEST(RoutingTest, ResolvesNumbersAndNamesForwardOnly) {
  EXPECT_EQ(FormatIpv4(Ip("10.20.30.40")), "10.20.30.40");
  auto localhost = ResolveIpv4("localhost");
  ASSERT_TRUE(localhost.ok());
  EXPECT_TRUE(IsLoopbackAddress(*localhost));
  auto bad = ResolveIpv4("no-such-host.invalid");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no-such-host.invalid"), std::string::npos);
  EXPECT_FALSE(bad.error().hint.empty());
}

}  // namespace
}  // namespace primus::platform
