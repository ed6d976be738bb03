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

TEST(RequestFlagsTest, PlotMustBeAnSvgFile) {
  EXPECT_TRUE(CheckSvgPlotPath("out/TFLOPS.SVG", "--plot tflops.svg").ok());
  Status png = CheckSvgPlotPath("busbw.png", "--plot busbw.svg");
  ASSERT_FALSE(png.ok());
  EXPECT_EQ(png.error().code, ExitCode::kUsage);
  EXPECT_NE(png.error().message.find("not 'busbw.png'"), std::string::npos);
  EXPECT_EQ(png.error().hint, "write --plot busbw.svg");
}

}  // namespace
}  // namespace primus::benchmark
