#include "runtime/container_limits.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace primus::runtime {
namespace {

TEST(ContainerLimitsTest, WantedValuesWhereTheHostPermits) {
  HostLimits host;  // unlimited hard limits
  host.can_raise = false;
  UlimitPlan plan = PlanUlimits(EngineKind::kDocker, host);
  EXPECT_EQ(plan.values, (std::vector<std::string>{"memlock=-1:-1", "nofile=1048576:1048576"}));
  EXPECT_TRUE(plan.warnings.empty());

  HostLimits capable;
  capable.memlock_hard = 65536;
  capable.nofile_hard = 1024;
  capable.can_raise = true;  // CAP_SYS_RESOURCE: the engine may raise them
  plan = PlanUlimits(EngineKind::kPodman, capable);
  EXPECT_EQ(plan.values, (std::vector<std::string>{"memlock=-1:-1", "nofile=1048576:1048576"}));
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(ContainerLimitsTest, FallsBackToTheHardLimitWithAWarning) {
  // Our machines: root without CAP_SYS_RESOURCE, nofile hard 20000, memlock 8 MiB, pid_max 32768.
  HostLimits host{8u << 20, 20000, 96365, 32768, false};
  UlimitPlan podman = PlanUlimits(EngineKind::kPodman, host);
  EXPECT_EQ(podman.values,
            (std::vector<std::string>{"memlock=8388608:8388608", "nofile=20000:20000", "nproc=32768:32768"}));
  ASSERT_EQ(podman.warnings.size(), 1u);
  EXPECT_NE(podman.warnings[0].find("hard limits, memlock 8 MiB (not unlimited), nofile 20000 (not 1048576)"),
            std::string::npos)
      << podman.warnings[0];
  EXPECT_NE(podman.warnings[0].find("CAP_SYS_RESOURCE"), std::string::npos);

  UlimitPlan docker = PlanUlimits(EngineKind::kDocker, host);
  EXPECT_EQ(docker.values, (std::vector<std::string>{"memlock=8388608:8388608", "nofile=20000:20000"}))
      << "docker takes nproc from its daemon";
}

TEST(ContainerLimitsTest, TheUsersOwnUlimitIsLeftAlone) {
  HostLimits host{8u << 20, 20000, 96365, 32768, false};
  UlimitPlan plan = PlanUlimits(EngineKind::kPodman, host, {"nofile", "nproc"});
  EXPECT_EQ(plan.values, (std::vector<std::string>{"memlock=8388608:8388608"}));
  EXPECT_EQ(plan.warnings.size(), 1u);
}

TEST(ContainerLimitsTest, ReadsThisProcess) {
  HostLimits host = ReadHostLimits();
  rlimit nofile{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &nofile), 0);
  EXPECT_EQ(host.nofile_hard, nofile.rlim_max == RLIM_INFINITY ? kUnlimited : nofile.rlim_max);
  EXPECT_GT(host.pid_max, 0u);
}

}  // namespace
}  // namespace primus::runtime
