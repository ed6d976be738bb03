#include "agent/platform_setup.h"

#include <gtest/gtest.h>

#include "agent/agent_test_util.h"
#include "agent/launch_spec_from_config.h"
#include "platform/test_fixtures.h"
#include "util/files.h"

namespace primus::agent {
namespace {

using platform::FixtureRoots;

config::LauncherConfig Load(const config::LauncherSources& sources) {
  auto loaded = config::LoadLauncherConfig(sources);
  EXPECT_TRUE(loaded.ok()) << loaded.error().Format();
  return loaded.ok() ? *loaded : config::LauncherConfig(config::Value(), {});
}

// LaunchSpecFromConfig then ApplyPlatformOn, as the run task does.
struct Applied {
  LaunchSpec spec;
  Result<PlatformSetup> setup = Error{};
};
Applied Apply(const std::string& host, const config::LauncherSources& sources,
              const Environment& current = {}, std::vector<platform::EnvAssignment> experiment_env = {}) {
  config::LauncherConfig launcher = Load(sources);
  Applied applied;
  auto spec = LaunchSpecFromConfig(launcher);
  EXPECT_TRUE(spec.ok()) << spec.error().Format();
  applied.spec = *spec;
  applied.setup = ApplyPlatformOn(FixtureRoots(host), current, launcher, std::move(experiment_env), &applied.spec);
  return applied;
}

TEST(PlatformSetupTest, AutoCountsTheFixturesGpusAndThePlanBecomesOverrides) {
  Applied mi300x = Apply("mi300x-8", {});
  ASSERT_TRUE(mi300x.setup.ok()) << mi300x.setup.error().Format();
  EXPECT_EQ(mi300x.spec.nproc_per_node, 8);
  EXPECT_FALSE(mi300x.spec.nproc_per_node_auto);
  const platform::EnvironmentPlan& plan = mi300x.setup->plan;
  ASSERT_EQ(plan.profile_chain.size(), 4u);
  EXPECT_EQ(plan.profile_chain[3].layer, "model/MI300X");
  EXPECT_EQ(plan.profile_chain[3].file, "profiles/model/MI300X.env");
  ASSERT_FALSE(plan.variables.empty());
  for (const auto& [name, value] : plan.variables) {
    EXPECT_EQ(mi300x.spec.env_overrides[name], value.value) << name;
  }
  EXPECT_EQ(plan.variables.at("NCCL_SOCKET_IFNAME").origin, "network auto-config");
  EXPECT_EQ(plan.variables.at("NCCL_SOCKET_IFNAME").value, "lo");  // single node, no master: loopback
  EXPECT_TRUE(mi300x.spec.placements.empty());

  Applied h100 = Apply("h100-8", {});
  ASSERT_TRUE(h100.setup.ok());
  EXPECT_EQ(h100.spec.nproc_per_node, 8);
  EXPECT_EQ(h100.setup->plan.profile_chain.back().layer, "model/H100");

  Applied cpu = Apply("cpu-only", {});
  ASSERT_TRUE(cpu.setup.ok());
  EXPECT_EQ(cpu.spec.nproc_per_node, 1);
}

TEST(PlatformSetupTest, VisibleDevicesAreCountedAndNeverWritten) {
  Applied some = Apply("h100-8", {}, {{"CUDA_VISIBLE_DEVICES", "2,3,5"}});
  ASSERT_TRUE(some.setup.ok());
  EXPECT_EQ(some.spec.nproc_per_node, 3);
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    EXPECT_EQ(some.spec.env_overrides.count(name), 0u) << name;
    EXPECT_EQ(some.setup->plan.variables.count(name), 0u) << name;
  }
  // An explicit count is kept, whatever the host has.
  config::LauncherSources sources;
  sources.flags = {{"direct.nproc_per_node", {"2"}, "--nproc-per-node"}};
  Applied two = Apply("mi300x-8", sources);
  ASSERT_TRUE(two.setup.ok());
  EXPECT_EQ(two.spec.nproc_per_node, 2);
}

TEST(PlatformSetupTest, ACountSetBeforeTheCallIsKept) {
  config::LauncherConfig launcher = Load({});
  auto spec = LaunchSpecFromConfig(launcher);
  ASSERT_TRUE(spec.ok());
  spec->nproc_per_node = 4;  // e.g. the experiment's distributed.nproc_per_node
  spec->nproc_per_node_auto = false;
  ASSERT_TRUE(ApplyPlatformOn(FixtureRoots("mi300x-8"), {}, launcher, {}, &*spec).ok());
  EXPECT_EQ(spec->nproc_per_node, 4);
}

TEST(PlatformSetupTest, PrecedenceAndOrigins) {
  testing::ScopedTempDir dir("platform-setup");
  std::string file = dir.path() + "/launcher.yaml";
  ASSERT_TRUE(WriteFileAtomic(file, "direct:\n  env:\n    FROM_FILE: file\n    NCCL_DEBUG: file\n").ok());
  config::LauncherSources sources;
  sources.explicit_file = file;
  sources.flags = {{"direct.env", {"NCCL_DEBUG=INFO", "CUDA_DEVICE_MAX_CONNECTIONS=4"}, "--env"}};
  Applied applied = Apply("mi300x-8", sources, {{"NCCL_IB_GID_INDEX", "5"}, {"FROM_FILE", "user"}},
                          {{"EXP_ONLY", "e", "exp.yaml:3"}});
  ASSERT_TRUE(applied.setup.ok()) << applied.setup.error().Format();
  const auto& variables = applied.setup->plan.variables;
  EXPECT_EQ(variables.at("NCCL_IB_GID_INDEX").value, "5");
  EXPECT_EQ(variables.at("NCCL_IB_GID_INDEX").origin, "user environment");
  EXPECT_EQ(variables.at("NCCL_DEBUG").value, "INFO");
  EXPECT_EQ(variables.at("NCCL_DEBUG").origin, "flag --env");
  EXPECT_EQ(variables.at("CUDA_DEVICE_MAX_CONNECTIONS").value, "4");  // over profiles/base.env
  EXPECT_EQ(variables.at("EXP_ONLY").origin, "exp.yaml:3");
  // A launcher file's direct.env ranks like an experiment's env: over the user's environment.
  EXPECT_EQ(variables.at("FROM_FILE").value, "file");
  EXPECT_EQ(applied.spec.env_overrides.at("NCCL_IB_GID_INDEX"), "5");
  EXPECT_EQ(applied.spec.env_overrides.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(applied.spec.env_overrides.at("FROM_FILE"), "file");
  EXPECT_EQ(applied.spec.env_overrides.at("EXP_ONLY"), "e");
  EXPECT_TRUE(applied.spec.env.empty());  // everything from direct.env is in the plan now
}

TEST(PlatformSetupTest, NamedProfilesAndImpossibleCombinations) {
  config::LauncherSources sources;
  sources.flags = {{"direct.profile", {"vccl-prod"}, "--profile"}};
  Applied prod = Apply("h100-8", sources);
  ASSERT_TRUE(prod.setup.ok()) << prod.setup.error().Format();
  EXPECT_EQ(prod.spec.env_overrides.at("NCCL_ENABLE_FAULT_TOLERANCE"), "1");
  EXPECT_EQ(prod.setup->plan.profile_chain.back().layer, "named/vccl-prod");

  sources.flags = {{"direct.profile", {"vccl-prod,vccl-sm-free"}, "--profile"}};
  Applied both = Apply("h100-8", sources);
  ASSERT_FALSE(both.setup.ok());
  EXPECT_EQ(both.setup.error().code, ExitCode::kConfig);

  sources.flags = {{"direct.profile", {"vccl-sm-free"}, "--profile"},
                   {"direct.env", {"NCCL_TELEMETRY_ENABLE=1"}, "--env"}};
  EXPECT_EQ(Apply("h100-8", sources).setup.error().code, ExitCode::kConfig);

  sources.flags = {{"direct.profile", {"vccl-prd"}, "--profile"}};
  Applied typo = Apply("h100-8", sources);
  ASSERT_FALSE(typo.setup.ok());
  EXPECT_EQ(typo.setup.error().code, ExitCode::kConfig);
  EXPECT_NE(typo.setup.error().message.find("unknown profile 'vccl-prd'"), std::string::npos);
}

TEST(PlatformSetupTest, NumaBindPlacesEachRankOnItsGpusNode) {
  config::LauncherSources sources;
  sources.flags = {{"direct.numa_bind", {"true"}, "--numa-bind"}};
  Applied applied = Apply("mi300x-8", sources);
  ASSERT_TRUE(applied.setup.ok());
  ASSERT_EQ(applied.spec.placements.size(), 8u);
  // GPUs 0-3 sit on node 0 (CPUs 0-95,192-287), 4-7 on node 1; 4 ranks share each node's 192 CPUs.
  EXPECT_EQ(applied.spec.placements[0].cpus.front(), 0);
  EXPECT_EQ(applied.spec.placements[0].cpus.size(), 192u);
  EXPECT_EQ(applied.spec.placements[0].omp_num_threads, 48);
  EXPECT_EQ(applied.spec.placements[7].cpus.front(), 96);

  // No NUMA information: one node 0 on cpu-only, so its rank is bound there.
  Applied cpu = Apply("cpu-only", sources);
  ASSERT_TRUE(cpu.setup.ok());
  ASSERT_EQ(cpu.spec.placements.size(), 1u);
  EXPECT_EQ(cpu.spec.placements[0].cpus, (std::vector<int>{0, 1}));
}

TEST(PlatformSetupTest, DescribesThePlanLikeInfo) {
  Applied applied = Apply("mi300x-8", {}, {{"NCCL_IB_GID_INDEX", "5"}});
  ASSERT_TRUE(applied.setup.ok());
  std::string text = DescribeWorkerEnvironment(*applied.setup);
  EXPECT_NE(text.find("profiles  profiles/base.env > profiles/vendor/amd.env > profiles/arch/gfx942.env > "
                      "profiles/model/MI300X.env"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NCCL_IB_GID_INDEX=5 "), std::string::npos) << text;
  EXPECT_NE(text.find(" user environment\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace primus::agent
