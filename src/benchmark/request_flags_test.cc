#include "benchmark/request_flags.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(RequestFlagsTest, DeviceChoiceIgnoresCaseAndSuggestsTheNearest) {
  EXPECT_EQ(*ParseDeviceChoice("GPU"), DeviceChoice::kGpu);
  EXPECT_EQ(*ParseDeviceChoice("cpu"), DeviceChoice::kCpu);
  EXPECT_EQ(*ParseDeviceChoice("auto"), DeviceChoice::kAuto);
  Result<DeviceChoice> typo = ParseDeviceChoice("gpus");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().code, ExitCode::kUsage);
  EXPECT_NE(typo.error().message.find("unknown --device 'gpus'"), std::string::npos) << typo.error().message;
  EXPECT_NE(typo.error().message.find("gpu"), std::string::npos);
}

}  // namespace
}  // namespace primus::benchmark
