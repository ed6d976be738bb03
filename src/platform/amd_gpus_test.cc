#include "platform/amd_gpus.h"

#include <gtest/gtest.h>

#include "platform/pci_devices.h"
#include "platform/test_fixtures.h"

namespace primus::platform {
namespace {

std::vector<GpuInfo> Detect(const std::string& host, Diagnostics& diagnostics) {
  Roots roots = FixtureRoots(host);
  return DetectAmdGpus(roots, ScanPciAccelerators(roots, diagnostics), diagnostics);
}

TEST(AmdGpusTest, EightMi300xInOneXgmiHive) {
  Diagnostics diagnostics;
  std::vector<GpuInfo> gpus = Detect("mi300x-8", diagnostics);
  EXPECT_TRUE(diagnostics.warnings().empty());
  ASSERT_EQ(gpus.size(), 8u);  // the two CPU nodes of the topology are not GPUs
  const GpuInfo& first = gpus.front();
  EXPECT_EQ(first.vendor, "amd");
  EXPECT_EQ(first.model, "MI300X");
  EXPECT_EQ(first.arch, "gfx942");
  EXPECT_EQ(first.device_id, 0x74a1);
  EXPECT_EQ(first.memory_bytes, 192LL << 30);  // from mem_banks: the kernel prints local_mem_size 0
  EXPECT_EQ(first.memory_source, "kfd");
  EXPECT_EQ(first.pci_bus_id, "0000:05:00.0");  // location_id 1280 = bus 0x05
  EXPECT_EQ(first.numa_node, 0);
  EXPECT_EQ(gpus[7].numa_node, 1);
  EXPECT_EQ(first.render_minor, 128);
  EXPECT_EQ(first.num_xcc, 8);
  EXPECT_EQ(first.hive_id, 11638818706288400384ull);
  EXPECT_EQ(first.uuid, "GPU-1b6d61638a86f800");
  EXPECT_EQ(first.pci.current_link_speed, "32.0 GT/s PCIe");
  EXPECT_EQ(first.pci.driver, "amdgpu");
  ASSERT_NE(first.known, nullptr);
  EXPECT_DOUBLE_EQ(first.known->bf16_tflops, 1307.4);
  for (size_t i = 0; i < gpus.size(); ++i) {
    // All-to-all: every GPU links to the seven others and never to itself.
    EXPECT_EQ(gpus[i].xgmi_peers.size(), 7u) << i;
    for (int peer : gpus[i].xgmi_peers) EXPECT_NE(peer, static_cast<int>(i));
    EXPECT_EQ(gpus[i].hive_id, first.hive_id);
  }
}

TEST(AmdGpusTest, Mi355xIsGfx950With288GiB) {
  Diagnostics diagnostics;
  std::vector<GpuInfo> gpus = Detect("mi355x-8", diagnostics);
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[3].model, "MI355X");
  EXPECT_EQ(gpus[3].arch, "gfx950");
  EXPECT_EQ(gpus[3].memory_bytes, 288LL << 30);
  EXPECT_EQ(gpus[3].pci_bus_id, "0000:75:00.0");
}

TEST(AmdGpusTest, ConsumerR9700OnASingleNodeDesktop) {
  Diagnostics diagnostics;
  std::vector<GpuInfo> gpus = Detect("r9700-1", diagnostics);
  EXPECT_TRUE(diagnostics.warnings().empty());
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].model, "R9700");
  EXPECT_EQ(gpus[0].arch, "gfx1201");
  EXPECT_EQ(gpus[0].memory_bytes, 32LL << 30);
  EXPECT_EQ(gpus[0].numa_node, -1);  // a one-node machine reports -1
  EXPECT_TRUE(gpus[0].xgmi_peers.empty());
  EXPECT_EQ(gpus[0].hive_id, 0u);
  EXPECT_EQ(gpus[0].pci.class_code, 0x030000u);
}

TEST(AmdGpusTest, DamagedTopologyGivesWarningsAndTheBestAnswer) {
  Diagnostics diagnostics;
  std::vector<GpuInfo> gpus = Detect("broken-amd", diagnostics);
  // Four GPU nodes, each damaged differently; all four are still counted.
  ASSERT_EQ(gpus.size(), 4u);
  // Node 1: a garbage io_link and no numa_node in its PCI entry.
  EXPECT_EQ(gpus[0].model, "MI300X");
  EXPECT_EQ(gpus[0].numa_node, -1);
  // Node 2: garbage lines in properties; the rest of the file still counts,
  // and without mem_banks the memory comes from the device table.
  EXPECT_EQ(gpus[1].model, "MI300X");
  EXPECT_EQ(gpus[1].memory_bytes, 192LL << 30);
  EXPECT_EQ(gpus[1].memory_source, "device table");
  // Node 3: properties unreadable: a GPU of unknown model and address.
  EXPECT_TRUE(gpus[2].model.empty());
  EXPECT_TRUE(gpus[2].pci_bus_id.empty());
  // Node 4: no gpu_id file, but its properties describe a GPU.
  EXPECT_EQ(gpus[3].model, "MI300X");
  auto warned = [&](const std::string& part) {
    for (const std::string& warning : diagnostics.warnings()) {
      if (warning.find(part) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(warned("nodes/1/io_links/2/properties"));
  EXPECT_TRUE(warned("nodes/2/properties: 3 malformed line(s)"));
  EXPECT_TRUE(warned("nodes/3/properties"));
  EXPECT_TRUE(warned("nodes/4/gpu_id is missing"));
  EXPECT_FALSE(warned("not in the KFD topology"));  // the unreadable node accounts for its PCI device
}

TEST(AmdGpusTest, NoKfdTopologyMeansNoAmdGpus) {
  Diagnostics diagnostics;
  EXPECT_TRUE(Detect("h100-8", diagnostics).empty());
  EXPECT_TRUE(Detect("cpu-only", diagnostics).empty());
  EXPECT_TRUE(diagnostics.warnings().empty());
}

}  // namespace
}  // namespace primus::platform
