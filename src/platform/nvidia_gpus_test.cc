#include "platform/nvidia_gpus.h"

#include <gtest/gtest.h>

#include "platform/pci_devices.h"
#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

std::vector<GpuInfo> Detect(const std::string& host, Diagnostics& diagnostics) {
  Roots roots = FixtureRoots(host);
  return DetectNvidiaGpus(roots, ScanPciAccelerators(roots, diagnostics), diagnostics);
}

TEST(NvidiaGpusTest, EightH100FromProcfsAndPci) {
  Diagnostics diagnostics;
  std::vector<GpuInfo> gpus = Detect("h100-8", diagnostics);
  EXPECT_TRUE(diagnostics.warnings().empty());
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:18:00.0");  // bus order
  EXPECT_EQ(gpus[7].pci_bus_id, "0000:db:00.0");
  EXPECT_EQ(gpus[0].vendor, "nvidia");
  EXPECT_EQ(gpus[0].model, "H100");
  EXPECT_EQ(gpus[0].product, "NVIDIA H100 80GB HBM3");  // the driver's own name
  EXPECT_EQ(gpus[0].arch, "sm90");
  EXPECT_EQ(gpus[0].memory_bytes, 80LL << 30);
  EXPECT_EQ(gpus[0].memory_source, "device table");
  EXPECT_EQ(gpus[0].uuid, "GPU-6e2c1d5f-1000-4a5e-9b8c-0f1e2d3c4b5a");
  EXPECT_EQ(gpus[0].device_minor, 0);
  EXPECT_EQ(gpus[3].numa_node, 0);
  EXPECT_EQ(gpus[4].numa_node, 1);
  ASSERT_NE(gpus[0].known, nullptr);
  EXPECT_DOUBLE_EQ(gpus[0].known->bf16_tflops, 989.4);
}

TEST(NvidiaGpusTest, H200AndTheDriverVersion) {
  Diagnostics diagnostics;
  std::vector<GpuInfo> gpus = Detect("h200-8", diagnostics);
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[0].model, "H200");
  EXPECT_EQ(gpus[0].memory_bytes, 141LL << 30);
  EXPECT_EQ(NvidiaDriverVersion(FixtureRoots("h200-8")), "560.35.03");
  EXPECT_EQ(NvidiaDriverVersion(FixtureRoots("h100-8")), "550.54.15");
  EXPECT_EQ(NvidiaDriverVersion(FixtureRoots("cpu-only")), "");
}

TEST(NvidiaGpusTest, DamagedProcfsKeepsEveryGpuAndWarns) {
  Diagnostics diagnostics;
  std::vector<GpuInfo> gpus = Detect("broken-nvidia", diagnostics);
  ASSERT_EQ(gpus.size(), 3u);
  // No Model line: the table's product name; no information file at all:
  // model and architecture still come from the PCI device id.
  EXPECT_EQ(gpus[1].product, "H100 SXM5 80GB");
  EXPECT_EQ(gpus[2].model, "H100");
  EXPECT_EQ(gpus[2].arch, "sm90");
  EXPECT_TRUE(gpus[2].uuid.empty());
  ASSERT_EQ(diagnostics.warnings().size(), 2u);
  EXPECT_NE(diagnostics.warnings()[0].find("has no 'Model:' line"), std::string::npos);
  EXPECT_NE(diagnostics.warnings()[1].find("0000:3a:00.0/information"), std::string::npos);
  EXPECT_EQ(NvidiaDriverVersion(FixtureRoots("broken-nvidia")), "");  // "garbage"
}

TEST(NvidiaGpusTest, AmdHostsHaveNoNvidiaGpus) {
  Diagnostics diagnostics;
  EXPECT_TRUE(Detect("mi300x-8", diagnostics).empty());
  EXPECT_TRUE(diagnostics.warnings().empty());
}

}  // namespace
}  // namespace primus::platform
