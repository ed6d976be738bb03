#include "preflight/preflight_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::preflight {
namespace {

std::vector<std::optional<NodeReport>> TwoNodes() {
  NodeReport good{0, "node01", {Pass("host", "memlock", "unlimited", "unlimited")}, {}};
  NodeReport bad{1, "node02",
                 {Pass("host", "memlock", "unlimited"),
                  Fail("network", "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME=ib0 selects no interface", "an existing interface",
                       "this node has: eth0, lo")},
                 {}};
  return {good, bad};
}

TEST(PreflightReportTest, NodeListsAreReadyForSrun) {
  ScopedTempDir dir("report");
  std::vector<std::string> written;
  ASSERT_TRUE(WriteNodeLists(JoinPath(dir.path(), "out"), TwoNodes(), &written).ok());
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(*ReadFile(JoinPath(dir.path(), "out/passing_nodes.txt")), "node01\n");
  EXPECT_EQ(*ReadFile(JoinPath(dir.path(), "out/failing_nodes.txt")), "node02\n");
}

TEST(PreflightReportTest, SummaryTableAndJson) {
  std::string summary = FormatJobSummary(TwoNodes());
  EXPECT_NE(summary.find("node02                   FAIL"), std::string::npos) << summary;
  EXPECT_NE(summary.find("fix: this node has: eth0, lo"), std::string::npos) << summary;
  auto json = nlohmann::json::parse(ReportJson(TwoNodes()));
  EXPECT_EQ(json["status"], "FAIL");
  EXPECT_EQ(json["nodes"][1]["checks"][1]["name"], "NCCL_SOCKET_IFNAME");
  std::string table = FormatNodeChecks(*TwoNodes()[1]);
  EXPECT_NE(table.find("FAIL  network  NCCL_SOCKET_IFNAME"), std::string::npos) << table;
  EXPECT_NE(table.find("FAIL: 1 passed, 0 warnings, 1 failed, 0 skipped"), std::string::npos) << table;
}

}  // namespace
}  // namespace primus::preflight
