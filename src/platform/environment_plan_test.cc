#include "platform/environment_plan.h"

#include <gtest/gtest.h>

#include <memory>

#include "util/scoped_temp_dir.h"
#include <stdlib.h>

#include "platform/host_detect.h"
#include "platform/profile_chain.h"
#include "platform/test_fixtures.h"
#include "util/files.h"

namespace primus::platform {
namespace {

std::vector<std::string> Layers(const EnvironmentPlan& plan) {
  std::vector<std::string> layers;
  for (const ProfileLayer& layer : plan.profile_chain) layers.push_back(layer.layer);
  return layers;
}

EnvironmentPlan Resolve(const std::string& fixture, EnvironmentPlanRequest request = {}) {
  auto plan = ResolveEnvironment(DetectHost(FixtureRoots(fixture)), request);
  EXPECT_TRUE(plan.ok()) << plan.error().Format();
  return plan.ok() ? *plan : EnvironmentPlan{};
}

// Temporary profile directories, removed when the test binary exits.
std::string TempDir() {
  static std::vector<std::unique_ptr<ScopedTempDir>> dirs;
  dirs.push_back(std::make_unique<ScopedTempDir>("profiles-test"));
  return dirs.back()->path();
}

TEST(EnvironmentPlanTest, Mi300xChainAndOrigins) {
  EnvironmentPlanRequest request;
  request.master_addr = "10.10.0.2";
  request.nnodes = 2;
  EnvironmentPlan plan = Resolve("mi300x-8", request);
  EXPECT_EQ(Layers(plan), (std::vector<std::string>{"base", "vendor/amd", "arch/gfx942", "model/MI300X"}));
  EXPECT_EQ(plan.profile_chain[3].file, "profiles/model/MI300X.env");
  EXPECT_EQ(plan.variables["HSA_NO_SCRATCH_RECLAIM"].value, "1");
  EXPECT_EQ(plan.variables["HSA_NO_SCRATCH_RECLAIM"].origin.rfind("profiles/vendor/amd.env:", 0), 0u);
  EXPECT_EQ(plan.variables["HSA_XNACK"].origin, "profiles/model/MI300X.env:3");
  EXPECT_EQ(plan.variables["HSA_KERNARG_POOL_SIZE"].value, "12582912");
  EXPECT_EQ(plan.variables["NCCL_SOCKET_IFNAME"].value, "enp193s0f0");
  EXPECT_EQ(plan.variables["NCCL_SOCKET_IFNAME"].origin, "network auto-config");
  EXPECT_EQ(plan.variables["NCCL_IB_HCA"].origin, "network auto-config");
  EXPECT_EQ(plan.variables.count("HIP_VISIBLE_DEVICES"), 0u);  // never set by us
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(EnvironmentPlanTest, EveryFixtureGetsItsChain) {
  EXPECT_EQ(Layers(Resolve("mi355x-8")), (std::vector<std::string>{"base", "vendor/amd", "arch/gfx950", "model/MI355X"}));
  EXPECT_EQ(Layers(Resolve("h100-8")), (std::vector<std::string>{"base", "vendor/nvidia", "arch/sm90", "model/H100"}));
  EXPECT_EQ(Layers(Resolve("r9700-1")), (std::vector<std::string>{"base", "vendor/amd", "arch/gfx1201", "model/R9700"}));
  EXPECT_EQ(Layers(Resolve("cpu-only")), (std::vector<std::string>{"base", "vendor/cpu"}));
  EnvironmentPlan h200 = Resolve("h200-8");
  EXPECT_EQ(h200.profile_chain[3].file, "");  // no H200 file: its architecture's settings apply
  EXPECT_EQ(h200.variables["NCCL_P2P_NET_CHUNKSIZE"].origin, "profiles/arch/sm90.env:6");
  EXPECT_EQ(h200.variables["NVTE_FWD_LAYERNORM_SM_MARGIN"].value, "8");  // arch beats vendor
  EXPECT_EQ(Resolve("r9700-1").variables["TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL"].value, "1");
  EXPECT_EQ(Resolve("cpu-only").variables.count("HSA_NO_SCRATCH_RECLAIM"), 0u);
}

TEST(EnvironmentPlanTest, ANewModelFallsBackToItsArchitecture) {
  // An MI350X has no model file (and the public Primus gave it nothing):
  // it still gets the gfx950 settings.
  HostInfo host = DetectHost(FixtureRoots("mi355x-8"));
  for (GpuInfo& gpu : host.gpus) gpu.model = "MI350X";
  auto plan = ResolveEnvironment(host, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->variables["RCCL_WARP_SPEED_AUTO"].value, "0");
  EXPECT_EQ(plan->variables.count("HSA_XNACK"), 0u);
  // A device missing from the table has no model layer at all.
  for (GpuInfo& gpu : host.gpus) gpu.model.clear();
  EXPECT_EQ(Layers(*ResolveEnvironment(host, {})), (std::vector<std::string>{"base", "vendor/amd", "arch/gfx950"}));
}

TEST(EnvironmentPlanTest, TheUsersEnvironmentIsKept) {
  EnvironmentPlanRequest request;
  request.current_environment = {{"HSA_NO_SCRATCH_RECLAIM", "0"}, {"NCCL_SOCKET_IFNAME", "bond0"}, {"PATH", "/usr/bin"}};
  request.master_addr = "10.10.0.2";
  request.nnodes = 2;
  EnvironmentPlan plan = Resolve("mi300x-8", request);
  EXPECT_EQ(plan.variables["HSA_NO_SCRATCH_RECLAIM"].value, "0");
  EXPECT_EQ(plan.variables["HSA_NO_SCRATCH_RECLAIM"].origin, "user environment");
  EXPECT_EQ(plan.variables["NCCL_SOCKET_IFNAME"].value, "bond0");  // auto-config never overrides the user
  EXPECT_EQ(plan.variables["NCCL_SOCKET_IFNAME"].origin, "user environment");
  EXPECT_EQ(plan.variables["GLOO_SOCKET_IFNAME"].origin, "network auto-config");
  EXPECT_EQ(plan.variables.count("PATH"), 0u);  // untouched variables are not in the plan
  Environment workers = plan.ApplyTo(request.current_environment);
  EXPECT_EQ(workers["HSA_NO_SCRATCH_RECLAIM"], "0");
  EXPECT_EQ(workers["PATH"], "/usr/bin");
  EXPECT_EQ(workers["GPU_MAX_HW_QUEUES"], "2");
}

TEST(EnvironmentPlanTest, UserNamedHcasAreNotSwitchedOff) {
  // No RDMA device in sysfs would mean NCCL_IB_DISABLE=1 ...
  EXPECT_EQ(Resolve("cpu-only").variables["NCCL_IB_DISABLE"].value, "1");
  // ... unless the user named HCAs (a container may not show them in sysfs).
  EnvironmentPlanRequest request;
  request.current_environment = {{"NCCL_IB_HCA", "mlx5_0:1"}};
  EXPECT_EQ(Resolve("cpu-only", request).variables.count("NCCL_IB_DISABLE"), 0u);
}

TEST(EnvironmentPlanTest, AnAddressInSocketIfnameIsFlagged) {
  EnvironmentPlanRequest request;
  request.current_environment = {{"NCCL_SOCKET_IFNAME", "10.10.0.15"}};
  EnvironmentPlan plan = Resolve("mi300x-8", request);
  EXPECT_EQ(plan.variables["NCCL_SOCKET_IFNAME"].value, "10.10.0.15");  // kept: it is the user's
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("is an IP address"), std::string::npos);
  EXPECT_NE(plan.warnings[0].find("user environment"), std::string::npos);
}

TEST(EnvironmentPlanTest, ProfilesMayOverrideTheEnvironmentWhenAsked) {
  EnvironmentPlanRequest request;
  request.current_environment = {{"HSA_NO_SCRATCH_RECLAIM", "0"}, {"NCCL_SOCKET_IFNAME", "bond0"}};
  request.profiles_override_environment = true;
  EnvironmentPlan plan = Resolve("mi300x-8", request);
  EXPECT_EQ(plan.variables["HSA_NO_SCRATCH_RECLAIM"].value, "1");
  EXPECT_EQ(plan.variables["NCCL_SOCKET_IFNAME"].value, "bond0");  // detection still defers to the user
}

TEST(EnvironmentPlanTest, ExperimentEnvAndCommandLineWinInThatOrder) {
  EnvironmentPlanRequest request;
  request.current_environment = {{"NCCL_DEBUG", "INFO"}, {"GPU_MAX_HW_QUEUES", "4"}};
  request.experiment_env = {{"NCCL_DEBUG", "WARN", "exp.yaml:12"}, {"GPU_MAX_HW_QUEUES", "1", ""}};
  request.command_line_env = {{"NCCL_DEBUG", "TRACE", ""}};
  EnvironmentPlan plan = Resolve("mi300x-8", request);
  EXPECT_EQ(plan.variables["NCCL_DEBUG"].value, "TRACE");
  EXPECT_EQ(plan.variables["NCCL_DEBUG"].origin, "--env");
  EXPECT_EQ(plan.variables["GPU_MAX_HW_QUEUES"].value, "1");
  EXPECT_EQ(plan.variables["GPU_MAX_HW_QUEUES"].origin, "experiment env");
  request.command_line_env = {{"NOT A NAME", "1", ""}};
  auto bad = ResolveEnvironment(DetectHost(FixtureRoots("mi300x-8")), request);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kConfig);
}

TEST(EnvironmentPlanTest, UserProfileDirectoriesLayerOnTheBuiltIns) {
  std::string site = TempDir(), personal = TempDir();
  ASSERT_TRUE(MakeDirs(site + "/arch").ok() && MakeDirs(site + "/named").ok() && MakeDirs(personal + "/model").ok());
  ASSERT_TRUE(WriteFileAtomic(site + "/arch/gfx942.env", "GPU_MAX_HW_QUEUES=4  # site tuning\nNCCL_IB_HCA=mlx5_0:1\n").ok());
  ASSERT_TRUE(WriteFileAtomic(personal + "/model/MI300X.env", "GPU_MAX_HW_QUEUES=8\nthis line is wrong\n").ok());
  ASSERT_TRUE(WriteFileAtomic(site + "/named/bigjob.env", "NCCL_MIN_NCHANNELS=112\n").ok());
  EnvironmentPlanRequest request;
  request.user_profile_dirs = {site, personal};
  request.profiles = {"bigjob"};
  EnvironmentPlan plan = Resolve("mi300x-8", request);
  EXPECT_EQ(plan.variables["GPU_MAX_HW_QUEUES"].value, "8");
  EXPECT_EQ(plan.variables["GPU_MAX_HW_QUEUES"].origin, personal + "/model/MI300X.env:1");
  EXPECT_EQ(plan.variables["NCCL_IB_HCA"].value, "mlx5_0:1");  // a user file beats auto-config
  EXPECT_EQ(plan.variables["NCCL_MIN_NCHANNELS"].origin, site + "/named/bigjob.env:1");
  EXPECT_EQ(Layers(plan), (std::vector<std::string>{"base", "vendor/amd", "arch/gfx942", "model/MI300X", "arch/gfx942",
                                                    "model/MI300X", "named/bigjob"}));
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("MI300X.env:2"), std::string::npos);
}

TEST(EnvironmentPlanTest, DefaultUserDirectoriesFollowXdgAndPrimusProfilePath) {
  std::string config = TempDir();
  ASSERT_TRUE(MakeDirs(config + "/primus/profiles").ok());
  std::vector<std::string> dirs =
      DefaultUserProfileDirs({{"XDG_CONFIG_HOME", config}, {"PRIMUS_PROFILE_PATH", "/first:/second"}});
  // Lowest priority first: the first PRIMUS_PROFILE_PATH entry wins, as in PATH.
  EXPECT_EQ(dirs, (std::vector<std::string>{config + "/primus/profiles", "/second", "/first"}));
}

TEST(EnvironmentPlanTest, NamedProfiles) {
  EnvironmentPlanRequest request;
  request.profiles = {"deterministic"};
  EnvironmentPlan plan = Resolve("h100-8", request);
  EXPECT_EQ(plan.variables["NCCL_ALGO"].value, "Ring");
  EXPECT_EQ(plan.variables["CUBLAS_WORKSPACE_CONFIG"].value, ":4096:8");
  EXPECT_EQ(plan.profile_chain.back().layer, "named/deterministic");
  request.profiles = {"vccl-prod"};
  request.current_environment = {{"NCCL_IB_HCA", "mlx5_0:1"}};
  plan = Resolve("h100-8", request);
  EXPECT_EQ(plan.variables["NCCL_ENABLE_FAULT_TOLERANCE"].value, "1");
  EXPECT_EQ(plan.variables["NCCL_DEBUG"].value, "WARN");
  EXPECT_TRUE(plan.warnings.empty());
  request.profiles = {"vccl-sm-free"};
  plan = Resolve("h100-8", request);
  EXPECT_EQ(plan.variables["NCCL_PASS_SM"].value, "1");
  EXPECT_EQ(plan.variables["NCCL_PXN_DISABLE"].value, "1");
}

TEST(EnvironmentPlanTest, UnknownProfileSuggestsTheClosestName) {
  EnvironmentPlanRequest request;
  request.profiles = {"vccl-prd"};
  auto plan = ResolveEnvironment(DetectHost(FixtureRoots("h100-8")), request);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ExitCode::kConfig);
  EXPECT_NE(plan.error().message.find("did you mean 'vccl-prod'"), std::string::npos);
  EXPECT_NE(plan.error().hint.find("deterministic"), std::string::npos);
  request.profiles = {"../../etc/passwd"};
  EXPECT_FALSE(ResolveEnvironment(DetectHost(FixtureRoots("h100-8")), request).ok());
}

TEST(EnvironmentPlanTest, SmFreeCannotBeCombinedWithFaultToleranceOrTelemetry) {
  HostInfo host = DetectHost(FixtureRoots("h100-8"));
  EnvironmentPlanRequest request;
  request.profiles = {"vccl-sm-free,vccl-prod"};
  auto both = ResolveEnvironment(host, request);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().code, ExitCode::kConfig);
  EXPECT_NE(both.error().message.find("--profile vccl-sm-free and vccl-prod cannot be combined"), std::string::npos);
  EXPECT_NE(both.error().message.find("fault tolerance"), std::string::npos);
  EXPECT_FALSE(both.error().hint.empty());
  request.profiles = {"vccl-dev", "vccl-sm-free"};  // telemetry, in either order
  EXPECT_FALSE(ResolveEnvironment(host, request).ok());
  // The same rule holds whoever sets the values: here the user's environment.
  request.profiles = {"vccl-sm-free"};
  request.current_environment = {{"NCCL_TELEMETRY_ENABLE", "1"}};
  auto from_environment = ResolveEnvironment(host, request);
  ASSERT_FALSE(from_environment.ok());
  EXPECT_NE(from_environment.error().message.find("user environment"), std::string::npos);
  // And --env can switch a feature off again.
  request.command_line_env = {{"NCCL_TELEMETRY_ENABLE", "0", ""}};
  EXPECT_TRUE(ResolveEnvironment(host, request).ok());
}

TEST(EnvironmentPlanTest, FaultToleranceWithoutRdmaIsWarnedAbout) {
  EnvironmentPlanRequest request;
  request.profiles = {"vccl-prod"};
  EnvironmentPlan plan = Resolve("cpu-only", request);
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_NE(plan.warnings.back().find("needs NCCL_IB_HCA"), std::string::npos);
}

}  // namespace
}  // namespace primus::platform
