#include "platform/host_system.h"

#include <gtest/gtest.h>

#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

TEST(HostSystemTest, TwoSocketServer) {
  Diagnostics diagnostics;
  HostInfo host;
  DetectHostSystem(FixtureRoots("mi300x-8"), diagnostics, host);
  EXPECT_TRUE(diagnostics.warnings().empty());
  EXPECT_EQ(host.hostname, "mi300x-node01");
  EXPECT_EQ(host.kernel, "5.15.0-119-generic");
  EXPECT_EQ(host.os, "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(host.cpu_model, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(host.sockets, 2);
  EXPECT_EQ(host.physical_cores, 192);
  EXPECT_EQ(host.logical_cpus, 384);
  EXPECT_EQ(host.memory_bytes, 2113513472LL * 1024);
  ASSERT_EQ(host.numa_nodes.size(), 2u);
  EXPECT_EQ(host.numa_nodes[1].id, 1);
  EXPECT_EQ(host.numa_nodes[1].cpus.size(), 192u);
  EXPECT_EQ(host.numa_nodes[1].cpus.front(), 96);
  EXPECT_EQ(host.allowed_cpus.size(), 384u);
}

TEST(HostSystemTest, MissingAndMalformedFilesLeaveGapsAndWarnings) {
  Diagnostics diagnostics;
  HostInfo host;
  DetectHostSystem(FixtureRoots("broken-amd"), diagnostics, host);
  EXPECT_EQ(host.logical_cpus, 0);   // no cpuinfo
  EXPECT_EQ(host.memory_bytes, 0);   // "MemTotal: lots kB"
  ASSERT_EQ(host.numa_nodes.size(), 1u);  // node1's cpulist is garbage
  EXPECT_EQ(host.kernel, "6.8.0-broken");
  EXPECT_EQ(diagnostics.warnings().size(), 3u);
}

}  // namespace
}  // namespace primus::platform
