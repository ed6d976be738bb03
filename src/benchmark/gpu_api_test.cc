#include "benchmark/gpu_api.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(GpuApiTest, PciAddressesAreNormalized) {
  EXPECT_EQ(NormalizePciBusId("00000000:0C:00.0"), "0000:0c:00.0");  // NVML's 8-digit domain
  EXPECT_EQ(NormalizePciBusId("0000:0C:00.0"), "0000:0c:00.0");      // cudaDeviceGetPCIBusId
  EXPECT_EQ(NormalizePciBusId("0000:c1:00.0"), "0000:c1:00.0");      // sysfs
  EXPECT_EQ(NormalizePciBusId("c1:00.0"), "0000:c1:00.0");
  EXPECT_EQ(NormalizePciBusId("gpu0"), "");
}

// Whatever this host has, opening the runtime ends in a clear state: the
// library is missing (named), or it loads and reports no usable GPU (named),
// or there is a GPU to count.
TEST(GpuApiTest, OpeningTheCudaRuntimeIsEitherUsableOrExplained) {
  auto runtime = GpuApi::Open(GpuVendor::kNvidia);
  if (!runtime.ok()) {
    EXPECT_EQ(runtime.error().code, ExitCode::kUnavailable);
    EXPECT_NE(runtime.error().message.find("libcudart"), std::string::npos) << runtime.error().message;
    return;
  }
  EXPECT_NE(runtime->Describe().find("CUDA runtime"), std::string::npos) << runtime->Describe();
  auto count = runtime->DeviceCount();
  if (!count.ok()) {
    EXPECT_EQ(count.error().code, ExitCode::kUnavailable);
    EXPECT_NE(count.error().message.find("no usable GPU"), std::string::npos) << count.error().message;
    EXPECT_NE(count.error().hint.find("--device cpu"), std::string::npos);
  } else {
    EXPECT_GE(*count, 0);
  }
}

TEST(GpuApiTest, MissingHipRuntimeIsNamed) {
  auto runtime = GpuApi::Open(GpuVendor::kAmd);
  if (!runtime.ok()) {
    EXPECT_NE(runtime.error().message.find("libamdhip64"), std::string::npos) << runtime.error().message;
  }
}

}  // namespace
}  // namespace primus::benchmark
