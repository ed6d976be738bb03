#include "platform/info_report.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

TEST(InfoReportTest, JsonHasTheDocumentedKeys) {
  HostInfo host = DetectHost(FixtureRoots("mi300x-8"));
  EnvironmentPlanRequest request;
  request.master_addr = "10.10.0.2";
  request.nnodes = 2;
  EnvironmentPlan plan = *ResolveEnvironment(host, request);
  nlohmann::ordered_json info = InfoJson(host, plan);
  ASSERT_EQ(info["gpus"].size(), 8u);
  const auto& gpu = info["gpus"][0];
  EXPECT_EQ(gpu["vendor"], "amd");
  EXPECT_EQ(gpu["model"], "MI300X");
  EXPECT_EQ(gpu["arch"], "gfx942");
  EXPECT_EQ(gpu["memory_bytes"], 192LL << 30);
  EXPECT_EQ(gpu["pci_bus_id"], "0000:05:00.0");
  EXPECT_EQ(gpu["numa_node"], 0);
  EXPECT_EQ(gpu["xgmi_peers"].size(), 7u);
  EXPECT_EQ(gpu["peak"]["bf16_tflops"], 1307.4);
  EXPECT_EQ(info["nics"]["rdma_ports"].size(), 8u);
  EXPECT_EQ(info["nics"]["rdma_ports"][0]["roce_v2_gid_index"], 3);
  EXPECT_EQ(info["nics"]["rdma_ports"][0]["used_by_nccl"], true);
  EXPECT_EQ(info["profile_chain"][1]["layer"], "vendor/amd");
  EXPECT_EQ(info["profile_chain"][1]["file"], "profiles/vendor/amd.env");
  EXPECT_EQ(info["env"]["NCCL_SOCKET_IFNAME"]["value"], "enp193s0f0");
  EXPECT_EQ(info["env"]["NCCL_SOCKET_IFNAME"]["origin"], "network auto-config");
  EXPECT_EQ(info["host"]["logical_cpus"], 384);
  EXPECT_TRUE(info["warnings"].empty());
}

TEST(InfoReportTest, AGpuLessHostStillHasEveryKey) {
  HostInfo host = DetectHost(FixtureRoots("cpu-only"));
  nlohmann::ordered_json info = InfoJson(host, *ResolveEnvironment(host, {}));
  for (const char* key : {"host", "gpus", "nics", "profile_chain", "env", "warnings"}) {
    EXPECT_TRUE(info.contains(key)) << key;
  }
  EXPECT_TRUE(info["gpus"].empty());
  EXPECT_EQ(info["profile_chain"][1]["file"], nullptr);  // no vendor/cpu.env is shipped
}

TEST(InfoReportTest, TextNamesWhatMatters) {
  HostInfo host = DetectHost(FixtureRoots("h200-8"));
  EnvironmentPlanRequest request;
  request.master_addr = "10.30.0.1";
  request.nnodes = 2;
  std::string text = InfoText(host, *ResolveEnvironment(host, request));
  EXPECT_NE(text.find("8 x NVIDIA H200 (sm90)"), std::string::npos) << text;
  EXPECT_NE(text.find("nvidia 560.35.03"), std::string::npos);
  EXPECT_NE(text.find("mlx5_3:1 DOWN"), std::string::npos);
  EXPECT_NE(text.find("NCCL_SOCKET_IFNAME==eth1"), std::string::npos);
  EXPECT_NE(text.find("profiles/arch/sm90.env > model/H200 (no file)"), std::string::npos);
  std::string broken = InfoText(DetectHost(FixtureRoots("broken-nvidia")), {});
  EXPECT_NE(broken.find("warning   "), std::string::npos);
}

TEST(InfoReportTest, PlanTextIsThePlanPartOfInfoText) {
  HostInfo host = DetectHost(FixtureRoots("mi300x-8"));
  EnvironmentPlan plan = *ResolveEnvironment(host, {});
  std::string text = PlanText(plan);
  EXPECT_EQ(text.rfind("profiles  profiles/base.env > profiles/vendor/amd.env > ", 0), 0u) << text;
  EXPECT_NE(text.find("\nenv       "), std::string::npos) << text;
  EXPECT_NE(InfoText(host, plan).find(text), std::string::npos);
}

}  // namespace
}  // namespace primus::platform
