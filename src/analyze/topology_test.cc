#include "analyze/topology.h"

#include <gtest/gtest.h>

#include <iterator>
#include <sstream>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

#include <unistd.h>

namespace primus::analyze {
namespace {

Topology Of(const std::string& host) {
  platform::Roots roots = platform::FixtureRoots(host);
  return BuildTopology(platform::DetectHost(roots), roots);
}

TEST(TopologyTest, Mi300xGpusAreAllXgmiConnectedAndNicsFollowNuma) {
  Topology topology = Of("mi300x-8");
  size_t gpus = 0;
  for (const TopologyDevice& device : topology.devices) gpus += device.kind == "gpu";
  ASSERT_EQ(gpus, 8u);
  for (size_t i = 0; i < 8; ++i) {
    for (size_t j = 0; j < 8; ++j) EXPECT_EQ(topology.links[i][j], i == j ? "X" : "XGMI") << i << "," << j;
  }
  // GPU to NIC: NODE on the same NUMA node, SYS across (no PCI hierarchy in fixtures).
  for (size_t i = 0; i < 8; ++i) {
    for (size_t j = 8; j < topology.devices.size(); ++j) {
      const std::string expected = topology.devices[i].numa_node == topology.devices[j].numa_node ? "NODE" : "SYS";
      EXPECT_EQ(topology.links[i][j], expected) << topology.devices[i].name << " " << topology.devices[j].name;
    }
  }
  std::string matrix = FormatTopologyMatrix(topology);
  std::string row = matrix.substr(matrix.find("\nGPU0 ") + 1);
  row = row.substr(0, row.find('\n'));
  std::istringstream cells(row);
  std::vector<std::string> tokens{std::istream_iterator<std::string>(cells), {}};
  ASSERT_EQ(tokens.size(), 1 + topology.devices.size() + 2) << row;  // name, links, NUMA, CPUs
  EXPECT_EQ(tokens[1], "X");
  EXPECT_EQ(tokens[2], "XGMI");
  EXPECT_EQ(tokens.back(), "0-95,192-287");
  EXPECT_NE(matrix.find("PCI hierarchy is not visible"), std::string::npos);
  std::string dot = TopologyDot(topology);
  EXPECT_NE(dot.find("\"GPU0\" -- \"GPU7\" [color=\"#d62728\", penwidth=2, label=\"XGMI\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("subgraph cluster_numa0"), std::string::npos);
}

TEST(TopologyTest, H100HasNoXgmiAndSaysNvlinkIsNotVisible) {
  Topology topology = Of("h100-8");
  ASSERT_GE(topology.devices.size(), 8u);
  EXPECT_EQ(topology.links[0][1] == "NODE" || topology.links[0][1] == "SYS", true) << topology.links[0][1];
  std::string matrix = FormatTopologyMatrix(topology);
  EXPECT_NE(matrix.find("NVLink is not visible in sysfs"), std::string::npos) << matrix;
}

TEST(TopologyTest, CpuOnlyHostSaysSo) {
  Topology topology = Of("cpu-only");
  std::string matrix = FormatTopologyMatrix(topology);
  if (topology.devices.empty()) {
    EXPECT_NE(matrix.find("no GPU and no RDMA or PCI network device detected"), std::string::npos) << matrix;
  } else {
    for (const TopologyDevice& device : topology.devices) EXPECT_EQ(device.kind, "nic");
  }
}

}  // namespace
}  // namespace primus::analyze

namespace primus::analyze {
namespace {

// A sysfs tree with the real shape: /sys/bus/pci/devices/<bdf> are links into
// /sys/devices/pci0000:00/<bridges>/<bdf>, so the PCIe relations show.
TEST(TopologyTest, PciHierarchyGivesPixPxbPhbAndNode) {
  ScopedTempDir root("topo");
  auto device = [&](const std::string& path) {
    std::string bdf = path.substr(path.rfind('/') + 1);
    ASSERT_TRUE(MakeDirs(root.path() + "/sys/devices/" + path).ok());
    ASSERT_TRUE(MakeDirs(root.path() + "/sys/bus/pci/devices").ok());
    ASSERT_EQ(::symlink(("../../../devices/" + path).c_str(), (root.path() + "/sys/bus/pci/devices/" + bdf).c_str()), 0);
  };
  device("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0");  // GPU0 behind switch 01:00.0
  device("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0");  // GPU1, same switch
  device("pci0000:00/0000:00:01.0/0000:01:01.0/0000:03:00.0");  // GPU2, a sibling switch
  device("pci0000:00/0000:00:02.0/0000:04:00.0");               // GPU3, another root port
  device("pci0000:80/0000:80:01.0/0000:81:00.0");               // GPU4, another root complex
  platform::HostInfo host;
  for (const char* bdf : {"0000:02:00.0", "0000:02:01.0", "0000:03:00.0", "0000:04:00.0", "0000:81:00.0"}) {
    platform::GpuInfo gpu;
    gpu.index = static_cast<int>(host.gpus.size());
    gpu.vendor = "amd";
    gpu.pci_bus_id = bdf;
    gpu.numa_node = 0;
    host.gpus.push_back(gpu);
  }
  Topology topology = BuildTopology(host, platform::Roots::UnderDirectory(root.path()));
  EXPECT_EQ(topology.links[0][1], "PIX");
  EXPECT_EQ(topology.links[0][2], "PXB");
  EXPECT_EQ(topology.links[0][3], "PHB");
  EXPECT_EQ(topology.links[0][4], "NODE");
  EXPECT_EQ(FormatTopologyMatrix(topology).find("not visible"), std::string::npos);
}

}  // namespace
}  // namespace primus::analyze
