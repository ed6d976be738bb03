#include "analyze/topology.h"

#include <gtest/gtest.h>

#include <iterator>
#include <sstream>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"

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
