#include "telemetry/telemetry_hub.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "platform/test_fixtures.h"
#include "telemetry/telemetry_test_util.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::telemetry {
namespace {

std::unique_ptr<NodeSampler> CpuSampler() {
  return std::make_unique<NodeSampler>(NodeSamplerSettings{platform::FixtureRoots("cpu-only"), {}, "lo"});
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Run "run-1" of two nodes and four workers, seen from `host`.
TelemetrySettings Settings(const std::string& log_dir, double interval_s, const std::string& host, int node_rank,
                           bool writes_files) {
  TelemetrySettings settings;
  settings.log_dir = log_dir;
  settings.interval_s = interval_s;
  settings.run_id = "run-1";
  settings.host = host;
  settings.node_rank = node_rank;
  settings.nnodes = 2;
  settings.world_size = 4;
  settings.writes_files = writes_files;
  return settings;
}

TEST(TelemetryHubTest, NodeZeroMergesTheMembersAndWritesTheFiles) {
  ScopedTempDir dir;
  TelemetryHub hub(Settings(dir.path(), 0.5, "host1", 0, true), CpuSampler());
  EXPECT_EQ(hub.JobView()["job"]["state"], "starting");
  EXPECT_TRUE(hub.NodeView().empty());
  hub.BeginGeneration(0, 0, 2, 4, 0);
  hub.SetState(JobState::kRunning);
  hub.SampleNode({{{0, 0, 4242, true}, ""}, {{1, 1, 4243, true}, ""}});
  NodeSample member;
  member.node_rank = 1;
  member.host = "host2";
  member.workers.push_back(MakeWorker(2, 0, 77, "running"));
  hub.AddNodeSample(ToJson(member));
  NodeSample stale = member;
  stale.generation = 5;
  stale.host = "stale";
  hub.AddNodeSample(ToJson(stale));  // another generation's: dropped
  hub.Publish();

  Json view = hub.JobView();
  EXPECT_EQ(view["job"]["run_id"], "run-1");
  EXPECT_EQ(view["job"]["coordinator"], "host1");
  EXPECT_EQ(view["job"]["interval_s"], 0.5);
  ASSERT_EQ(view["nodes"].size(), 2u);
  EXPECT_EQ(view["nodes"][1]["host"], "host2");
  EXPECT_TRUE(view["nodes"][1].contains("age_s"));
  EXPECT_EQ(hub.NodeView()["workers"].size(), 2u);
  EXPECT_FALSE(hub.NodeView().contains("age_s"));

  auto written = ReadFile(hub.job_file());
  ASSERT_TRUE(written);
  EXPECT_EQ(Json::parse(*written), view);
  hub.SetState(JobState::kSucceeded);
  hub.Publish();
  std::vector<std::string> history = Lines(hub.history_file());
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(Json::parse(history[1])["state"], "succeeded");
  EXPECT_EQ(Json::parse(*ReadFile(hub.job_file()))["job"]["state"], "succeeded");
}

TEST(TelemetryHubTest, AMemberKeepsItsOwnViewAndWritesNothing) {
  ScopedTempDir dir;
  TelemetryHub hub(Settings(dir.path(), 5, "host2", 1, false), CpuSampler());
  hub.BeginGeneration(0, 1, 2, 4, 0);
  hub.SampleNode({{{2, 0, 4242, true}, ""}});
  NodeSample other;
  other.node_rank = 0;
  hub.AddNodeSample(ToJson(other));
  hub.Publish();
  Json view = hub.JobView();
  ASSERT_EQ(view["nodes"].size(), 1u);
  EXPECT_EQ(view["nodes"][0]["node_rank"], 1);
  EXPECT_FALSE(PathExists(hub.job_file()));
  EXPECT_FALSE(PathExists(hub.history_file()));
}

TEST(TelemetryHubTest, AHistoryPastItsLimitKeepsOneLineInTen) {
  ScopedTempDir dir;
  TelemetrySettings settings = Settings(dir.path(), 5, "host1", 0, true);
  settings.nnodes = 1;
  settings.world_size = 1;
  settings.history_limit_bytes = 10000;
  TelemetryHub hub(settings, CpuSampler());
  hub.SampleNode({});
  for (int i = 0; i < 100; ++i) hub.Publish();
  std::vector<std::string> lines = Lines(hub.history_file());
  struct stat info {};
  ASSERT_EQ(::stat(hub.history_file().c_str(), &info), 0);
  EXPECT_LE(info.st_size, 10000 + 1000);
  EXPECT_LT(lines.size(), 100u);
  for (const std::string& line : lines) EXPECT_NO_THROW(Json::parse(line));
  EXPECT_EQ(ThinLines("a\nb\nc\nd\n", 2), "a\nc\n");
  EXPECT_EQ(ThinLines("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n"), "0\n10\n");
}

}  // namespace
}  // namespace primus::telemetry
