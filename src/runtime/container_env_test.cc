#include "runtime/container_env.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

EnvRequest Request() {
  EnvRequest request;
  request.prefixes = {"PRIMUS_", "NCCL_", "RCCL_", "GLOO_", "HSA_", "HIP_", "CUDA_", "TORCH_"};
  request.host = {{"PATH", "/usr/bin"},           {"HOME", "/root"},
                  {"NCCL_DEBUG", "INFO"},         {"HIP_VISIBLE_DEVICES", "0,1"},
                  {"PRIMUS_JOB_TOKEN", "s3cret"}, {"SLURM_JOB_ID", "7"},
                  {"TORCH_NCCL_X", "1"},          {"MY_TOKEN", "x"}};
  return request;
}

TEST(ContainerEnvTest, PrefixesTokenAndNothingElse) {
  auto plan = PlanEnvironment(Request());
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_EQ(plan->names, (std::vector<std::string>{"PRIMUS_JOB_TOKEN", "HIP_VISIBLE_DEVICES", "NCCL_DEBUG", "TORCH_NCCL_X"}));
  EXPECT_TRUE(plan->values.empty()) << "host values are inherited by the engine, never copied";
}

TEST(ContainerEnvTest, TheTokenAndJobIdGoEvenWithoutPrefixes) {
  EnvRequest request = Request();
  request.prefixes = {"NCCL_"};
  request.host["PRIMUS_JOB_ID"] = "job-1";
  request.host["PRIMUS_OTHER"] = "x";
  auto plan = PlanEnvironment(request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->names, (std::vector<std::string>{"PRIMUS_JOB_TOKEN", "PRIMUS_JOB_ID", "NCCL_DEBUG"}));
}

TEST(ContainerEnvTest, ExplicitEntriesComeFirstAndValuesGoToTheEngineEnvironment) {
  EnvRequest request = Request();
  request.entries = {"FOO=bar baz", "HOME", "NCCL_DEBUG=WARN", "EMPTY="};
  auto plan = PlanEnvironment(request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->names, (std::vector<std::string>{"FOO", "HOME", "NCCL_DEBUG", "EMPTY", "PRIMUS_JOB_TOKEN",
                                                   "HIP_VISIBLE_DEVICES", "TORCH_NCCL_X"}));
  EXPECT_EQ(plan->values, (std::map<std::string, std::string>{{"FOO", "bar baz"}, {"NCCL_DEBUG", "WARN"}, {"EMPTY", ""}}));
}

TEST(ContainerEnvTest, AnUnsetNameIsAWarningNotAForward) {
  EnvRequest request = Request();
  request.entries = {"NOT_HERE"};
  auto plan = PlanEnvironment(request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(std::count(plan->names.begin(), plan->names.end(), "NOT_HERE"), 0);
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_NE(plan->warnings[0].find("NOT_HERE is not set here"), std::string::npos);
}

TEST(ContainerEnvTest, LauncherValuesNeverOverrideTheUserOrTheHost) {
  EnvRequest request = Request();
  request.launcher = {{"PRIMUS_JOB_ID", "4711"}, {"XDG_CONFIG_HOME", "/root/.config"}};
  auto plan = PlanEnvironment(request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->values.at("PRIMUS_JOB_ID"), "4711");
  EXPECT_EQ(plan->values.at("XDG_CONFIG_HOME"), "/root/.config");

  request.host["PRIMUS_JOB_ID"] = "from-host";
  request.entries = {"XDG_CONFIG_HOME=/mine"};
  plan = PlanEnvironment(request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->values.count("PRIMUS_JOB_ID"), 0u) << "the host's is inherited";
  EXPECT_EQ(plan->values.at("XDG_CONFIG_HOME"), "/mine");
  EXPECT_EQ(std::count(plan->names.begin(), plan->names.end(), "PRIMUS_JOB_ID"), 1);
}

TEST(ContainerEnvTest, BadNamesAreUsageErrors) {
  for (const char* entry : {"=x", "1A=2", "A-B=3", ""}) {
    EnvRequest request = Request();
    request.entries = {entry};
    request.entries_origin = "container.env (flag --env)";
    auto plan = PlanEnvironment(request);
    ASSERT_FALSE(plan.ok()) << entry;
    EXPECT_EQ(plan.error().code, ExitCode::kUsage);
    EXPECT_NE(plan.error().message.find("flag --env"), std::string::npos);
  }
}

}  // namespace
}  // namespace primus::runtime
