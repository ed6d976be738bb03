#include "analyze/run_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <regex>

#include "analyze/run_report_html.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::analyze {
namespace {

namespace fs = std::filesystem;

// A two-node run with a failure in attempt 0 and a restart, in the formats of
// docs/monitor.md (per-rank metrics, telemetry history) and of what train and
// the agent write (metadata.json, metrics.jsonl, endings logs, config/, env/).
std::string Fixture() { return std::string(PRIMUS_SOURCE_DIR) + "/src/analyze/testdata/run-report"; }

class RunReportTest : public testing::Test {
 protected:
  // The fixture's log stamps are written in UTC.
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_tz_ = tz ? tz : "";
    had_tz_ = tz != nullptr;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_tz_) setenv("TZ", saved_tz_.c_str(), 1);
    else unsetenv("TZ");
    tzset();
  }
  std::string saved_tz_;
  bool had_tz_ = false;
};

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

void Write(const std::string& path, const std::string& text) {
  ASSERT_TRUE(MakeDirs(DirName(path)).ok());
  ASSERT_TRUE(WriteFileAtomic(path, text).ok());
}

TEST_F(RunReportTest, ReadsEveryPartOfTheFixtureRun) {
  auto report = LoadRunReport(Fixture());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  EXPECT_EQ(report->summary.points.size(), 70u);
  EXPECT_EQ(report->summary.points.back().attempt, 1);

  ASSERT_EQ(report->ranks.size(), 4u);
  EXPECT_EQ(report->ranks[3].rank, 3);
  EXPECT_EQ(report->ranks[3].host, "host2");
  EXPECT_EQ(report->ranks[3].step_time_s.size(), 70u) << "both attempts; the torn last line is skipped";

  ASSERT_EQ(report->nodes.size(), 2u);
  EXPECT_EQ(report->nodes[1].host, "host2");
  EXPECT_EQ(report->nodes[1].cpu_percent.size(), 24u);
  ASSERT_EQ(report->nodes[1].gpu_utilization.size(), 2u);
  ASSERT_EQ(report->notes.size(), 1u) << "the history's garbage line is counted";

  // The failure that caused the restart, and what the launch ran with.
  ASSERT_EQ(report->summary.failures.size(), 1u);
  EXPECT_EQ(DescribeAttemptFailure(report->summary.failures[0]),
            "attempt 0: rank 3 on host2 (exit code 1): RuntimeError: CUDA error: an illegal memory access was "
            "encountered [gpu-illegal-memory-access: " +
                report->summary.failures[0].meaning + "]; restarted");
  EXPECT_EQ(DescribeRunRootCause(report->summary), "none: the run recovered from 1 failure(s)");
  bool annotated = false;
  for (const OriginEntry& entry : report->config) {
    if (entry.name == "fault_tolerance.max_restarts") {
      EXPECT_EQ(entry.value, "0");
      EXPECT_EQ(entry.origin, "config/exp.yaml; the launch ran with direct.max_restarts 1 (flag --max-restarts)");
      annotated = true;
    }
  }
  EXPECT_TRUE(annotated) << "the experiment's max_restarts is in the table";
  ASSERT_EQ(report->launcher.size(), 4u);
  EXPECT_EQ(report->launcher[1].name, "direct.max_restarts");
  EXPECT_EQ(report->launcher[1].origin, "flag --max-restarts");
  std::string text = FormatRunSummary(report->summary);
  EXPECT_NE(text.find("  failed:     attempt 0: rank 3 on host2 (exit code 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("  launched:   nnodes 2 (flag --nnodes), nproc_per_node 2 (experiment config/exp.yaml), "
                      "max_restarts 1 (flag --max-restarts), hang_timeout 1800 (default)"),
            std::string::npos)
      << text;
  nlohmann::json json = nlohmann::json::parse(RunSummaryJson(report->summary));
  EXPECT_EQ(json["failures"][0]["cause"]["rank"], 3);
  EXPECT_EQ(json["failures"][0]["restarted"], true);
  EXPECT_EQ(json["launch_settings"]["direct.max_restarts"]["origin"], "flag --max-restarts");

  ASSERT_EQ(report->attempts.size(), 2u);
  const AttemptRecord& first = report->attempts[0];
  EXPECT_EQ(first.start, report->summary.start_s + 10);
  ASSERT_EQ(first.endings.size(), 4u);
  EXPECT_TRUE(first.endings[0].failure) << "the earliest ending is rank 3's exit code 1";
  EXPECT_EQ(first.endings[0].rank, 3);
  EXPECT_NE(first.endings[0].error_message.find("illegal memory access"), std::string::npos);
  EXPECT_EQ(std::count_if(first.endings.begin(), first.endings.end(), [](const EndingLine& e) { return e.failure; }), 1)
      << "workers stopped by the agent are not failures";

  auto origin = [&](const std::string& key) {
    for (const OriginEntry& entry : report->config) {
      if (entry.name == key) return entry.origin;
    }
    return std::string("(missing)");
  };
  EXPECT_EQ(origin("training.steps"), "command line training.steps=60");
  EXPECT_EQ(origin("training.lr"), "config/exp.yaml");
  EXPECT_EQ(origin("training.seq_len"), "config/base.yaml");
  EXPECT_EQ(origin("model.name"), "config/base.yaml");
  EXPECT_EQ(origin("training.warmup"), "default");
  EXPECT_EQ(origin("hooks.dirs"), "default");
  ASSERT_EQ(report->environment.size(), 3u);
}

TEST_F(RunReportTest, EveryUserStringAppearsAsTextNeverAsMarkup) {
  auto report = LoadRunReport(Fixture());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  // Strings the user controls, in every place the page shows one.
  std::string evil = "<script>alert(1)</script>";
  report->summary.dir = "/tmp/" + evil;
  report->summary.task = evil;
  report->summary.metrics_source = evil;
  report->summary.root_cause = {{"rank", 1}, {"host", evil}, {"exit_code", 1}, {"message", evil}};
  report->metadata["hosts"] = {evil};
  report->metadata["argv"] = {"primus-cli", evil};
  report->metadata["git"]["commit"] = evil;
  report->ranks[0].host = evil;
  report->nodes[0].host = evil;
  report->attempts[0].endings[0].host = evil;
  report->attempts[0].endings[0].text = evil;
  report->attempts[0].endings[0].error_message = evil;
  report->config.push_back({evil, evil, evil});
  report->environment.push_back({evil, evil, evil});
  report->notes.push_back(evil);
  std::string html = RenderRunReportHtml(*report);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "no script element at all: the page has none of its own";
  EXPECT_EQ(html.find("alert(1)</"), std::string::npos);
  EXPECT_GE(Count(html, "&lt;script&gt;alert(1)&lt;/script&gt;"), 15u);
  // The fixture's own config value and environment values.
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;&quot;quoted&quot; &amp; &#39;single&#39;&lt;/b&gt;"), std::string::npos);
}

TEST_F(RunReportTest, SecretsStayRedacted) {
  auto report = LoadRunReport(Fixture());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  std::string html = RenderRunReportHtml(*report);
  std::smatch row;
  std::string rest = html;
  EXPECT_TRUE(std::regex_search(rest, row, std::regex("<td>HF_TOKEN</td><td class=\"value\">([^<]*)</td>"))) << html;
  EXPECT_EQ(row[1], "&lt;redacted&gt;");
  EXPECT_TRUE(std::regex_search(rest, row, std::regex("<td>env.HF_TOKEN</td><td class=\"value\">([^<]*)</td>")));
  EXPECT_EQ(row[1], "&lt;redacted&gt;");
}

TEST_F(RunReportTest, ThePageHasEverySectionAndNeedsNothingFromElsewhere) {
  auto report = LoadRunReport(Fixture());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  std::string html = RenderRunReportHtml(*report);
  for (const char* id : {"id=\"loss-chart\"", "id=\"throughput-chart\"", "id=\"step-time-chart\"", "id=\"gpu-chart-node0\"",
                         "id=\"gpu-chart-node1\"", "id=\"cpu-chart\"", "id=\"attempts-timeline\"", "id=\"configuration\"",
                         "id=\"environment\"", "id=\"step-parts-by-rank\"", "id=\"step-parts-by-step\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  EXPECT_EQ(Count(html, "class=\"missing\""), 1u) << "only the notes section's skipped line";
  EXPECT_NE(html.find("data-series=\"attempt 0\" data-points=\"40\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"attempt 1\" data-points=\"30\""), std::string::npos);
  EXPECT_NE(html.find("restart: attempt 1"), std::string::npos);
  EXPECT_EQ(Count(html, "class=\"mark failure\""), 1u);
  EXPECT_NE(html.find("<title>host2 rank 3: ended with exit code 1 (local rank 1, pid 202)\nRuntimeError: CUDA error: an "
                      "illegal memory access &lt;was&gt; encountered</title>"),
            std::string::npos)
      << "the failing worker, how it ended and its error message on hover";
  // Self-contained: nothing is fetched (the SVG namespace is a name, not a fetch).
  std::string fetched = std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  EXPECT_EQ(fetched.find("http://"), std::string::npos);
  EXPECT_EQ(fetched.find("https://"), std::string::npos);
  EXPECT_EQ(fetched.find(" src="), std::string::npos);
  EXPECT_EQ(fetched.find("<link"), std::string::npos);
}

TEST_F(RunReportTest, MissingPartsSayWhatIsMissingInOneLine) {
  ScopedTempDir dir("bare");
  Write(JoinPath(dir.path(), "metadata.json"), R"({"task": "train pretrain", "status": "failed", "exit_code": 1})");
  auto report = LoadRunReport(dir.path());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  std::string html = RenderRunReportHtml(*report);
  EXPECT_EQ(Count(html, "class=\"missing\""), 7u) << html;
  EXPECT_NE(html.find("No rank said where its step time goes. Megatron-LM prints it with --timing-log-level 1"),
            std::string::npos);
  EXPECT_NE(html.find("No training metrics"), std::string::npos);
  EXPECT_NE(html.find("No per-rank step times"), std::string::npos);
  EXPECT_NE(html.find("No telemetry history"), std::string::npos);
  EXPECT_NE(html.find("No attempt logs"), std::string::npos);
  EXPECT_NE(html.find("No configuration recorded"), std::string::npos);
  EXPECT_NE(html.find("No worker environment recorded"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos) << "no empty charts";
}

TEST_F(RunReportTest, WhereTheStepTimeGoesNamesTheRankTheOthersWaitFor) {
  auto report = LoadRunReport(Fixture());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  std::string html = RenderRunReportHtml(*report);
  size_t section = html.find("<section id=\"step-parts\">");
  ASSERT_NE(section, std::string::npos);
  std::string parts = html.substr(section, html.find("</section>", section) - section);
  // Rank 3 computes 90% of its 0.65 s steps; the others compute half of 0.41 s and wait.
  EXPECT_NE(parts.find("data-slowest-rank=\"3\""), std::string::npos) << parts;
  EXPECT_NE(parts.find("Slowest rank: rank 3 on host2"), std::string::npos) << parts;
  EXPECT_NE(parts.find("data-label=\"rank 3 (slowest)\" data-marked=\"1\""), std::string::npos) << parts;
  EXPECT_EQ(Count(parts, "class=\"bar\""), 4u + 30u) << "four ranks, then rank 3's 30 steps of its last attempt";
}

TEST_F(RunReportTest, AStepRecordedTwiceCountsOnceWithItsLaterParts) {
  ScopedTempDir dir("twice");
  Write(JoinPath(dir.path(), "metadata.json"), R"({"task": "train pretrain", "status": "succeeded"})");
  // The agent's second record of a Megatron-LM step carries its timers.
  Write(JoinPath(dir.path(), "logs/attempt_0/host.rank1.metrics.jsonl"),
        R"({"step": 10, "step_time_s": 1.0})" "\n"
        R"({"step": 10, "step_time_s": 1.0, "time_parts": {"forward-backward": {"s": 0.8, "slowest_rank": 0}}})" "\n"
        R"({"step": 20, "step_time_s": 1.0})" "\n");
  auto report = LoadRunReport(dir.path());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  ASSERT_EQ(report->ranks.size(), 1u);
  EXPECT_EQ(report->ranks[0].step_time_s.size(), 2u);
  ASSERT_EQ(report->ranks[0].parts.size(), 1u);
  EXPECT_EQ(report->ranks[0].parts[0].step, 10);
  std::string html = RenderRunReportHtml(*report);
  EXPECT_NE(html.find("timers, printed by rank 1 for the whole job"), std::string::npos);
  EXPECT_NE(html.find("Slowest rank in the largest part: rank 0."), std::string::npos);
}

TEST_F(RunReportTest, AHundredThousandStepsGiveAPageOfBoundedSize) {
  ScopedTempDir dir("long");
  Write(JoinPath(dir.path(), "metadata.json"),
        R"({"task": "train pretrain", "status": "succeeded", "start_time": "2026-11-25T09:00:00Z"})");
  std::string metrics, rank_metrics;
  for (int step = 1; step <= 100000; ++step) {
    metrics += fmt::format(R"({{"step": {}, "loss": {}, "tokens_per_s": {}, "time": {}}})" "\n", step, 5.0 / step + 2,
                           4000 + step % 100, 1795597200.0 + step * 0.5);
    rank_metrics += fmt::format(R"({{"step": {}, "step_time_s": {}}})" "\n", step, 0.5 + (step % 7) * 0.01);
  }
  Write(JoinPath(dir.path(), "metrics.jsonl"), metrics);
  for (int rank = 0; rank < 2; ++rank) {
    Write(JoinPath(dir.path(), fmt::format("logs/attempt_0/host.rank{}.metrics.jsonl", rank)), rank_metrics);
  }
  auto report = LoadRunReport(dir.path());
  ASSERT_TRUE(report.ok()) << report.error().Format();
  ASSERT_EQ(report->summary.points.size(), 100000u);
  std::string html = RenderRunReportHtml(*report);
  EXPECT_NE(html.find("data-source-points=\"100000\""), std::string::npos);
  EXPECT_EQ(html.find(fmt::format("data-points=\"{}\"", 100000)), std::string::npos);
  EXPECT_LT(html.size(), 256u * 1024) << "metrics.jsonl is " << metrics.size() << " bytes";
}

}  // namespace
}  // namespace primus::analyze
