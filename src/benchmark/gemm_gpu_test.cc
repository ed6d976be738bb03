// The GPU GEMM engine's pieces that run without a GPU: the device-table
// match by name and the peak per dtype. The engine itself runs on GPU
// machines (bench/gpu_bench.py).
#include "benchmark/gemm_gpu.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(GemmGpuTest, DeviceTableEntryFromTheRuntimeName) {
  const platform::KnownDevice* sxm = KnownDeviceFromName("NVIDIA H100 80GB HBM3");
  ASSERT_NE(sxm, nullptr);
  EXPECT_EQ(sxm->product, "H100 SXM5 80GB");
  const platform::KnownDevice* pcie = KnownDeviceFromName("NVIDIA H100 PCIe");
  ASSERT_NE(pcie, nullptr);
  EXPECT_EQ(pcie->product, "H100 PCIe");
  const platform::KnownDevice* h200 = KnownDeviceFromName("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->product, "H200 SXM 141GB");
  const platform::KnownDevice* gh200 = KnownDeviceFromName("NVIDIA GH200 480GB");
  ASSERT_NE(gh200, nullptr);
  EXPECT_EQ(gh200->model, "GH200") << "the longest model name wins over H200";
  const platform::KnownDevice* mi300x = KnownDeviceFromName("AMD Instinct MI300X");
  ASSERT_NE(mi300x, nullptr);
  EXPECT_EQ(mi300x->model, "MI300X");
  EXPECT_EQ(KnownDeviceFromName("Tesla T4"), nullptr);
}

TEST(GemmGpuTest, PeakPerDtype) {
  const platform::KnownDevice* h100 = KnownDeviceFromName("NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(PeakTflops(h100, GemmDtype::kBf16), 989.4);
  EXPECT_DOUBLE_EQ(PeakTflops(h100, GemmDtype::kFp16), 989.4);
  EXPECT_DOUBLE_EQ(PeakTflops(h100, GemmDtype::kFp8), 1978.9);
  EXPECT_DOUBLE_EQ(PeakTflops(h100, GemmDtype::kFp32), 66.9);
  EXPECT_DOUBLE_EQ(PeakTflops(h100, GemmDtype::kTf32), 0) << "no TF32 column in the device table";
  EXPECT_DOUBLE_EQ(PeakTflops(nullptr, GemmDtype::kBf16), 0);
}

}  // namespace
}  // namespace primus::benchmark
