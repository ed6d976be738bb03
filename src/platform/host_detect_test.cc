#include "platform/host_detect.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

TEST(HostDetectTest, EveryFixtureHostIsRecognised) {
  struct Expected {
    const char* fixture;
    size_t gpus;
    const char* model;
    const char* arch;
    size_t rdma_ports;
  };
  for (const Expected& expected : {Expected{"mi300x-8", 8, "MI300X", "gfx942", 8},
                                   Expected{"mi355x-8", 8, "MI355X", "gfx950", 8},
                                   Expected{"h100-8", 8, "H100", "sm90", 12},
                                   Expected{"h200-8", 8, "H200", "sm90", 12},
                                   Expected{"r9700-1", 1, "R9700", "gfx1201", 0},
                                   Expected{"cpu-only", 0, "", "", 0}}) {
    SCOPED_TRACE(expected.fixture);
    HostInfo host = DetectHost(FixtureRoots(expected.fixture));
    EXPECT_TRUE(host.warnings.empty()) << host.warnings.front();
    ASSERT_EQ(host.gpus.size(), expected.gpus);
    for (size_t i = 0; i < host.gpus.size(); ++i) {
      EXPECT_EQ(host.gpus[i].index, static_cast<int>(i));
      EXPECT_EQ(host.gpus[i].model, expected.model);
      EXPECT_EQ(host.gpus[i].arch, expected.arch);
    }
    EXPECT_EQ(host.ib_ports.size(), expected.rdma_ports);
    EXPECT_FALSE(host.routes.empty());
    EXPECT_FALSE(host.numa_nodes.empty());
    EXPECT_GT(host.logical_cpus, 0);
  }
}

TEST(HostDetectTest, DriversAreReported) {
  EXPECT_EQ(DetectHost(FixtureRoots("mi300x-8")).amdgpu_driver_version, "6.8.5");
  HostInfo h100 = DetectHost(FixtureRoots("h100-8"));
  EXPECT_EQ(h100.nvidia_driver_version, "550.54.15");
  EXPECT_EQ(h100.amdgpu_driver_version, "");
}

TEST(HostDetectTest, BrokenHostsStillAnswerWithWarnings) {
  HostInfo amd = DetectHost(FixtureRoots("broken-amd"));
  EXPECT_EQ(amd.gpus.size(), 4u);
  EXPECT_GE(amd.warnings.size(), 8u);
  HostInfo nvidia = DetectHost(FixtureRoots("broken-nvidia"));
  EXPECT_EQ(nvidia.gpus.size(), 3u);
  EXPECT_GE(nvidia.warnings.size(), 3u);  // two procfs files and the missing route table
}

TEST(HostDetectTest, AMissingTreeIsAnEmptyHostNotACrash) {
  HostInfo host = DetectHost(Roots::UnderDirectory("/nonexistent/primus-host"));
  EXPECT_TRUE(host.gpus.empty());
  EXPECT_TRUE(host.interfaces.empty());
  EXPECT_FALSE(host.warnings.empty());
}

TEST(HostDetectTest, RootsComeFromTheEnvironment) {
  setenv("PRIMUS_SYSFS_ROOT", "/x/sys", 1);
  setenv("PRIMUS_PROCFS_ROOT", "/x/proc", 1);
  Roots roots = Roots::FromEnvironment();
  EXPECT_EQ(roots.sysfs, "/x/sys");
  EXPECT_EQ(roots.procfs, "/x/proc");
  EXPECT_EQ(roots.etc, "/etc");
  EXPECT_FALSE(roots.IsLiveSystem());
  unsetenv("PRIMUS_SYSFS_ROOT");
  unsetenv("PRIMUS_PROCFS_ROOT");
  EXPECT_TRUE(Roots::FromEnvironment().IsLiveSystem());
}

// This machine: a GPU-less build host. Detection must work on the real
// /sys and /proc (its speed is measured by bench/platform_detect_bench).
TEST(HostDetectTest, TheRealMachine) {
  HostInfo host = DetectHost(Roots{});
  EXPECT_EQ(host.logical_cpus, static_cast<int>(sysconf(_SC_NPROCESSORS_CONF)));
  EXPECT_GT(host.memory_bytes, 0);
  EXPECT_FALSE(host.kernel.empty());
  bool loopback = false;
  for (const NetInterface& interface : host.interfaces) {
    if (interface.loopback) {
      loopback = true;
      EXPECT_FALSE(interface.ipv4.empty());  // live addresses come from getifaddrs
    }
  }
  EXPECT_TRUE(loopback);
}

}  // namespace
}  // namespace primus::platform
