#include "train/system_info.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/roots.h"

namespace primus::train {
namespace {

TEST(SystemInfoTest, FixtureHostsDescribeTheirGpus) {
  auto host = platform::DetectHost(platform::Roots::UnderDirectory(std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/mi300x-8"));
  nlohmann::ordered_json info = DescribeSystem(host);
  EXPECT_EQ(info["gpu_count"], 8);
  EXPECT_EQ(info["gpu_vendor"], "amd");
  EXPECT_EQ(info["gpu_model"], "MI300X");
  auto cpu_only = platform::DetectHost(platform::Roots::UnderDirectory(std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/cpu-only"));
  EXPECT_EQ(DescribeSystem(cpu_only)["gpu_count"], 0);
  EXPECT_TRUE(DescribeSystem(cpu_only)["gpu_model"].is_null());
}

TEST(SystemInfoTest, PythonVersionsFromTheInterpreter) {
  nlohmann::ordered_json info;
  AddPythonVersions("/usr/bin/python3", &info);
  ASSERT_TRUE(info.contains("python"));
  EXPECT_EQ(info["python"].get<std::string>().substr(0, 2), "3.");
  AddPythonVersions("/nonexistent/python", &info);  // absent interpreter: no crash, nothing changed
  EXPECT_TRUE(info.contains("python"));
}

}  // namespace
}  // namespace primus::train
