#include "monitor/job_view_text.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace primus::monitor {
namespace {

using nlohmann::json;

json Fixture(const std::string& name) {
  std::ifstream in(std::string(PRIMUS_SOURCE_DIR) + "/src/monitor/testdata/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// Columns on a terminal: UTF-8 continuation bytes take none.
size_t Columns(const std::string& text) {
  size_t columns = 0;
  for (unsigned char byte : text) columns += (byte & 0xC0) != 0x80;
  return columns;
}

std::string All(const std::vector<ViewLine>& lines) { return DrawLines(lines, false); }

// The line that starts with `prefix` after the mark column, or "".
std::string RankLine(const std::vector<ViewLine>& lines, int rank) {
  for (const ViewLine& line : lines) {
    if (line.text.size() > 6 && line.text.substr(1, 5) == std::string(5 - std::to_string(rank).size(), ' ') + std::to_string(rank) &&
        line.text.find("running") != std::string::npos) {
      return line.text;
    }
  }
  return "";
}

// A job of `nodes` x `ranks` with rank `slow` a straggler (-1: none).
json WideJob(int nodes, int ranks, int slow) {
  json view = {{"format", "primus-job-telemetry/1"},
               {"job", {{"run_id", "wide"}, {"time", 1000.0}, {"state", "running"}, {"generation", 0}, {"restarts", 0},
                        {"nnodes", nodes}, {"world_size", nodes * ranks}, {"interval_s", 5}, {"step", 10},
                        {"total_steps", 100}, {"progress", 0.1}, {"loss", 2.5}, {"tokens_per_s", 1e6},
                        {"median_step_time_s", 0.5}}},
               {"stragglers", json::array()},
               {"nodes", json::array()}};
  for (int n = 0; n < nodes; ++n) {
    json node = {{"node_rank", n}, {"host", "node" + std::to_string(n)}, {"age_s", 0.5},
                 {"host_stats", {{"cpus", 128}, {"cpu_percent", 800.0}, {"mem_used_bytes", 5e11}, {"mem_total_bytes", 2e12}}},
                 {"gpus", json::array()}, {"workers", json::array()}};
    for (int r = 0; r < ranks; ++r) {
      int rank = n * ranks + r;
      node["gpus"].push_back({{"index", r}, {"utilization_percent", 95}, {"memory_used_bytes", 6e10}, {"memory_total_bytes", 2e11}});
      node["workers"].push_back({{"rank", rank}, {"local_rank", r}, {"state", "running"}, {"step", 10}, {"loss", 2.5},
                                 {"tokens_per_s", 2000.0}, {"step_time_s", rank == slow ? 0.9 : 0.5 + 0.001 * r},
                                 {"cpu_percent", 100.0}, {"rss_bytes", 4e9}});
    }
    view["nodes"].push_back(node);
  }
  if (slow >= 0) {
    view["stragglers"].push_back({{"kind", "rank"}, {"rank", slow}, {"node_rank", slow / ranks}, {"host", "node" + std::to_string(slow / ranks)},
                                  {"step_time_s", 0.9}, {"median_step_time_s", 0.5}, {"ratio", 1.8}, {"samples", 3}});
  }
  return view;
}

TEST(JobViewTextTest, HeaderShowsTheJob) {
  ViewOptions options;
  options.now = 1764060002.2;
  std::string text = All(LayoutJobView(Fixture("two_nodes.json"), options));
  EXPECT_NE(text.find("job 20261125-093000-1a2b3c  RUNNING  generation 0  restarts 0  nodes 2  world 4"), std::string::npos) << text;
  EXPECT_NE(text.find("step 120/200"), std::string::npos) << text;
  EXPECT_NE(text.find("60.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("ETA 34s"), std::string::npos) << text;
  EXPECT_NE(text.find("loss 3.2100  tokens/s 19.8k  median step 0.420s  updated 2s ago"), std::string::npos) << text;
}

TEST(JobViewTextTest, AStragglerRowIsMarkedAndListedWithItsRatio) {
  std::vector<ViewLine> lines = LayoutJobView(Fixture("two_nodes.json"), {});
  std::string text = All(lines);
  EXPECT_NE(text.find("stragglers (2), marked ! below:"), std::string::npos) << text;
  EXPECT_NE(text.find("! rank 1 on host1 (node 0): step 0.610s, 1.45x the median 0.420s in 3 samples"), std::string::npos) << text;
  EXPECT_NE(text.find("! gpu 1 on host2 (node 1): 41% busy, the job's median 96% in 3 samples"), std::string::npos) << text;
  std::string slow = RankLine(lines, 1);
  ASSERT_FALSE(slow.empty()) << text;
  EXPECT_EQ(slow[0], '!') << slow;
  EXPECT_NE(slow.find("slow 1.45x"), std::string::npos) << slow;
  std::string fine = RankLine(lines, 0);
  ASSERT_FALSE(fine.empty()) << text;
  EXPECT_EQ(fine[0], ' ') << fine;
  EXPECT_EQ(fine.find("slow"), std::string::npos) << fine;
  for (const ViewLine& line : lines) {
    if (line.text == slow) {
      EXPECT_EQ(line.style, LineStyle::kWarn);
    }
  }
  // The slow GPU is marked on the row of the rank that uses it (node 1, local rank 1: rank 3).
  EXPECT_NE(text.find("   1  41%!     1B/2B"), std::string::npos) << text;
}

TEST(JobViewTextTest, RankRowsCarryTheirOwnNumbersAndTheirGpu) {
  std::vector<ViewLine> lines = LayoutJobView(Fixture("two_nodes.json"), {});
  std::string rank0 = RankLine(lines, 0);
  EXPECT_NE(rank0.find("running"), std::string::npos);
  EXPECT_NE(rank0.find(" 120 "), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("3.2100"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("5.1k"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("0.420s"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("100%"), std::string::npos) << rank0;  // 99.5% of a core
  EXPECT_NE(rank0.find("1.2G"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("   0   97%  40G/192G"), std::string::npos) << rank0;
  std::string text = All(lines);
  EXPECT_NE(text.find("node 0 host1  cpu 153% of 16  mem 7.6G/125G  eth0 rx 1.4M/s tx 1.3M/s  2 gpus 96% mem 80G/384G"),
            std::string::npos)
      << text;
}

TEST(JobViewTextTest, ANodeSilentForThreeIntervalsIsMarkedStale) {
  std::vector<ViewLine> lines = LayoutJobView(Fixture("two_nodes.json"), {});
  bool stale_host2 = false, stale_host1 = false;
  for (const ViewLine& line : lines) {
    if (line.text.starts_with("node 1 host2  STALE: no report for 16s")) stale_host2 = line.style == LineStyle::kBad;
    if (line.text.starts_with("node 0 host1") && line.text.find("STALE") != std::string::npos) stale_host1 = true;
  }
  EXPECT_TRUE(stale_host2) << All(lines);
  EXPECT_FALSE(stale_host1) << All(lines);
}

TEST(JobViewTextTest, AViewNotRewrittenForThreeIntervalsSaysSo) {
  ViewOptions options;
  options.now = 1764060000.2 + 60;
  std::string text = All(LayoutJobView(Fixture("two_nodes.json"), options));
  EXPECT_NE(text.find("STALE: no update for 1m00s"), std::string::npos) << text;
}

TEST(JobViewTextTest, SixtyFourNodesOfEightRanksFitAnEightyByTwentyFourScreen) {
  json view = WideJob(64, 8, 77);
  ViewOptions options;
  options.width = 80;
  options.height = 24;
  std::vector<ViewLine> lines = LayoutJobView(view, options);
  EXPECT_LE(lines.size(), 24u);
  for (const ViewLine& line : lines) EXPECT_LE(Columns(line.text), 80u) << line.text;
  std::string text = All(lines);
  // The straggler and its node are on screen, and the rest is summarised.
  EXPECT_FALSE(RankLine(lines, 77).empty()) << text;
  EXPECT_EQ(RankLine(lines, 77)[0], '!');
  EXPECT_NE(text.find("node 9 node9"), std::string::npos) << text;
  EXPECT_NE(text.find("more nodes, none stale, no stragglers"), std::string::npos) << text;
  EXPECT_NE(text.find("of 512 ranks shown"), std::string::npos) << text;
  EXPECT_NE(text.find("! rank 77 on node9 (node 9): step 0.900s, 1.80x the median 0.500s"), std::string::npos) << text;
}

TEST(JobViewTextTest, AScreenTallEnoughShowsEachNodesSlowestAndFastest) {
  json view = WideJob(4, 8, 3);
  ViewOptions options;
  options.width = 100;
  options.height = 24;
  std::vector<ViewLine> lines = LayoutJobView(view, options);
  std::string text = All(lines);
  EXPECT_NE(text.find("stragglers, each node's slowest and fastest"), std::string::npos) << text;
  EXPECT_FALSE(RankLine(lines, 3).empty()) << text;    // the straggler
  EXPECT_FALSE(RankLine(lines, 8).empty()) << text;    // node 1's fastest
  EXPECT_FALSE(RankLine(lines, 15).empty()) << text;   // node 1's slowest
  EXPECT_TRUE(RankLine(lines, 10).empty()) << text;    // neither
  for (int node = 0; node < 4; ++node) EXPECT_NE(text.find("node " + std::to_string(node) + " node"), std::string::npos);
}

TEST(JobViewTextTest, WithoutASizeEveryRankIsListed) {
  std::vector<ViewLine> lines = LayoutJobView(WideJob(64, 8, 77), {});
  for (int rank = 0; rank < 512; ++rank) EXPECT_FALSE(RankLine(lines, rank).empty()) << rank;
  EXPECT_EQ(All(lines).find("ranks shown"), std::string::npos);
}

TEST(JobViewTextTest, EscapeCodesOnlyOnATerminal) {
  std::vector<ViewLine> lines = LayoutJobView(Fixture("two_nodes.json"), {});
  EXPECT_EQ(DrawLines(lines, false).find('\x1b'), std::string::npos);
  std::string screen = DrawScreen(lines, true);
  EXPECT_TRUE(screen.starts_with("\x1b[H")) << "redraws from the top left";
  EXPECT_TRUE(screen.ends_with("\x1b[J")) << "clears what the last frame left below";
  EXPECT_NE(screen.find("\x1b[K"), std::string::npos);
  EXPECT_NE(screen.find("\x1b[33m"), std::string::npos) << "stragglers coloured";
  EXPECT_EQ(screen.find("\n", screen.rfind("\x1b[K") ), std::string::npos) << "no line break after the last row";
}

TEST(JobViewTextTest, ControlCharactersFromTheViewAreNotSentToTheTerminal) {
  json view = Fixture("two_nodes.json");
  view["nodes"][0]["host"] = "evil\x1b]0;pwned\x07";
  std::string text = DrawLines(LayoutJobView(view, {}), false);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
}

TEST(JobViewTextTest, AsciiModeUsesOnlyAscii) {
  ViewOptions options;
  options.ascii = true;
  options.width = 80;
  std::string text = All(LayoutJobView(Fixture("two_nodes.json"), options));
  for (unsigned char c : text) EXPECT_LT(c, 0x80);
  EXPECT_NE(text.find("[######"), std::string::npos) << text;
  options.ascii = false;
  EXPECT_NE(All(LayoutJobView(Fixture("two_nodes.json"), options)).find("\u2588"), std::string::npos);
}

TEST(JobViewTextTest, UnknownValuesAreDashesAndAnEmptyViewStillDraws) {
  json view = {{"format", "primus-job-telemetry/1"}, {"job", {{"state", "starting"}}}};
  std::string text = All(LayoutJobView(view, {}));
  EXPECT_NE(text.find("job -  STARTING"), std::string::npos) << text;
  EXPECT_NE(text.find("step -"), std::string::npos) << text;
  EXPECT_NE(text.find("no node has reported yet"), std::string::npos) << text;
}

TEST(JobViewTextTest, EndedStateAndFormats) {
  EXPECT_EQ(EndedState(json{{"job", {{"state", "running"}}}}), "");
  EXPECT_EQ(EndedState(json{{"job", {{"state", "failed"}}}}), "failed");
  EXPECT_EQ(EndedState(json{{"job", {{"state", "succeeded"}}}}), "succeeded");
  EXPECT_EQ(FormatCount(950), "950");
  EXPECT_EQ(FormatCount(19752), "19.8k");
  EXPECT_EQ(FormatCount(2.5e6), "2.5M");
  EXPECT_EQ(FormatBytes(8123456789), "7.6G");
  EXPECT_EQ(FormatBytes(512), "512B");
  EXPECT_EQ(FormatDuration(33.6), "34s");
  EXPECT_EQ(FormatDuration(3725), "1h02m");
  EXPECT_EQ(FormatDuration(312), "5m12s");
}

}  // namespace
}  // namespace primus::monitor
