// `analyze run --html` on a real train run with a failure and a restart
// (real PyTorch workers, the trainer's --fail-at-step hook), rendered in a
// real headless browser (Debian's chromium): the page loads, the loss curve
// in its DOM has one point per step the run logged, the failure sits on the
// timeline, and a screenshot is kept as a test artifact
// (build/test-artifacts/run-report.png). Slow: a training run and a browser.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

// The points of every polyline inside the element with this id.
size_t PolylinePoints(const std::string& dom, const std::string& id) {
  size_t start = dom.find("id=\"" + id + "\"");
  if (start == std::string::npos) return 0;
  size_t end = dom.find("</svg>", start);
  std::string chart = dom.substr(start, end - start);
  static const std::regex points_attribute(" points=\"([^\"]*)\"");
  size_t count = 0;
  for (auto it = std::sregex_iterator(chart.begin(), chart.end(), points_attribute); it != std::sregex_iterator(); ++it) {
    for (const std::string& pair : Split(std::string(Trim((*it)[1].str())), ' ')) count += pair.find(',') != std::string::npos;
  }
  return count;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

// chromium --headless with its own profile in a temp dir, bounded in time.
ProcessResult Chromium(const std::vector<std::string>& args, const TempDir& profile) {
  std::vector<std::string> argv = {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                   "--no-first-run", "--user-data-dir=" + profile.path(), "--hide-scrollbars"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.env["HOME"] = profile.path();
  options.timeout_s = 150;
  return RunProcess(argv, options);
}

// The example trainer's tiny-cpu experiment, with these overrides and trainer flags, into `workspace`.
// `direct_flags` go to the launcher, before "--".
ProcessResult TrainTinyCpu(const TempDir& workspace, const std::vector<std::string>& extra,
                           const std::vector<std::string>& direct_flags = {}) {
  ProcessOptions options;
  options.cwd = PRIMUS_SOURCE_DIR;
  options.env["NO_COLOR"] = "1";
  options.timeout_s = 300;
  std::vector<std::string> argv = {"direct", "--hang-timeout", "60"};
  argv.insert(argv.end(), direct_flags.begin(), direct_flags.end());
  for (std::string arg : {"--", "train", "pretrain", "--config", "examples/gpt/configs/tiny-cpu.yaml"}) argv.push_back(arg);
  argv.push_back("workspace=" + workspace.path());
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunPrimus(argv, options);
}

// A run launched with --max-restarts 1 over the file's max_restarts 0: rank 1
// fails once, the run recovers, and `analyze run` names the failure behind
// the restart and the flag the run had (no browser needed).
TEST(RunReportRestartTest, AnalyzeRunNamesTheFailureBehindTheRestartAndTheFlagTheRunHad) {
  TempDir workspace;
  ProcessResult train = TrainTinyCpu(workspace, {"training.steps=30", "checkpoint.interval=10", "--fail-at-step", "15",
                                                 "--fail-rank", "1"},
                                     {"--max-restarts", "1"});
  ASSERT_EQ(train.exit_code, 0) << train.all();
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(workspace.path())) dirs.push_back(entry.path());
  ASSERT_EQ(dirs.size(), 1u);
  ProcessResult text = RunPrimus({"analyze", "run", dirs[0].string()});
  ASSERT_EQ(text.exit_code, 0) << text.all();
  EXPECT_NE(text.out.find("  failed:     attempt 0: rank 1 on "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("fails on purpose"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("; restarted\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  root cause: none: the run recovered from 1 failure(s)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("max_restarts 1 (flag --max-restarts)"), std::string::npos) << text.out;
  ProcessResult json = RunPrimus({"analyze", "run", dirs[0].string(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.all();
  nlohmann::json summary = nlohmann::json::parse(json.out);
  ASSERT_EQ(summary["failures"].size(), 1u) << json.out;
  EXPECT_EQ(summary["failures"][0]["cause"]["rank"], 1);
  EXPECT_EQ(summary["failures"][0]["signature"], "python-exception");
  EXPECT_EQ(summary["launch_settings"]["direct.max_restarts"]["value"], "1");
  EXPECT_EQ(summary["launch_settings"]["direct.max_restarts"]["origin"], "flag --max-restarts");
  // The report's configuration table: the file's 0, and what the launch ran with.
  std::string page = (dirs[0] / "report.html").string();
  ASSERT_EQ(RunPrimus({"analyze", "run", dirs[0].string(), "--html", page}).exit_code, 0);
  std::string html = Slurp(page);
  EXPECT_NE(html.find("the launch ran with direct.max_restarts 1 (flag --max-restarts)"), std::string::npos);
  EXPECT_NE(html.find("attempt 0: rank 1 on "), std::string::npos);
}

TEST(RunReportBrowserTest, ARealRunWithARestartRendersInABrowser) {
  if (FindExecutable("chromium").empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it)";
  TempDir workspace;
  ProcessResult train = TrainTinyCpu(workspace, {"training.steps=40", "checkpoint.interval=10",
                                                 "fault_tolerance.max_restarts=1", "--fail-at-step", "25", "--fail-rank", "1"});
  ASSERT_EQ(train.exit_code, 0) << train.all();
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(workspace.path())) dirs.push_back(entry.path());
  ASSERT_EQ(dirs.size(), 1u);
  fs::path dir = dirs[0];
  size_t steps_logged = 0;
  for (const std::string& line : Split(Slurp(dir / "metrics.jsonl"), '\n')) steps_logged += !Trim(line).empty();
  ASSERT_GT(steps_logged, 40u) << "the steps after the last checkpoint are run twice";

  std::string page = (dir / "report.html").string();
  ProcessResult analyze = RunPrimus({"analyze", "run", dir.string(), "--html", page});
  ASSERT_EQ(analyze.exit_code, 0) << analyze.all();
  EXPECT_NE(analyze.out.find("report:     " + page), std::string::npos) << analyze.out;

  TempDir profile;
  ProcessResult dump = Chromium({"--dump-dom", "file://" + page}, profile);
  ASSERT_EQ(dump.exit_code, 0) << dump.all();
  const std::string& dom = dump.out;
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "the browser parsed the whole page: " << dump.all();
  EXPECT_EQ(PolylinePoints(dom, "loss-chart"), steps_logged) << "one point per logged step, both attempts";
  EXPECT_NE(dom.find("data-series=\"attempt 1\""), std::string::npos) << "the attempt after the restart has its own curve";
  EXPECT_GT(PolylinePoints(dom, "throughput-chart"), 0u);
  // Rank 1's failure is on the timeline; rank 0 may fail too (its peer is gone) before the agent stops it.
  EXPECT_GE(Count(dom, "class=\"mark failure\""), 1u);
  EXPECT_NE(dom.find("rank 1: ended with exit code 1"), std::string::npos);
  EXPECT_NE(dom.find("fails on purpose"), std::string::npos) << "its error message from the worker's error file";
  EXPECT_NE(dom.find("command line training.steps=40"), std::string::npos) << "the override's origin";
  EXPECT_NE(dom.find("config/tiny-cpu.yaml"), std::string::npos) << "the experiment file's keys";
  // Per-rank metrics and telemetry may or may not be there: either a chart or one line saying why not.
  for (const char* section : {"id=\"step-times\"", "id=\"nodes\""}) {
    size_t at = dom.find(section);
    ASSERT_NE(at, std::string::npos) << section;
    std::string body = dom.substr(at, dom.find("</section>", at) - at);
    EXPECT_TRUE(body.find("<svg") != std::string::npos || body.find("class=\"missing\"") != std::string::npos) << body;
  }

  fs::path artifacts = fs::path(PRIMUS_BINARY_DIR) / "test-artifacts";
  fs::create_directories(artifacts);
  fs::path png = artifacts / "run-report.png";
  fs::remove(png);
  ProcessResult shot = Chromium({"--screenshot=" + png.string(), "--window-size=1280,2000", "file://" + page}, profile);
  ASSERT_EQ(shot.exit_code, 0) << shot.all();
  std::string image = Slurp(png.string());
  ASSERT_GT(image.size(), 10000u) << "a screenshot with something on it: " << shot.all();
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::cout << "screenshot: " << png.string() << "\n";
}

// The example trainer reports its compute, communication and data per step;
// rank 1 made slow (its --slow-rank hook) is the one the report names, and
// the other rank's time shows as waiting in communication.
TEST(RunReportStepPartsTest, TheExampleTrainersStragglerIsNamedWhereTheStepTimeGoes) {
  TempDir workspace;
  ProcessResult train = TrainTinyCpu(workspace, {"training.steps=12", "--slow-rank", "1", "--slow-ms", "300"});
  ASSERT_EQ(train.exit_code, 0) << train.all();
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(workspace.path())) dirs.push_back(entry.path());
  ASSERT_EQ(dirs.size(), 1u);
  std::string page = (dirs[0] / "report.html").string();
  ProcessResult analyze = RunPrimus({"analyze", "run", dirs[0].string(), "--html", page});
  ASSERT_EQ(analyze.exit_code, 0) << analyze.all();
  std::string html = Slurp(page);
  size_t at = html.find("<section id=\"step-parts\">");
  ASSERT_NE(at, std::string::npos);
  std::string parts = html.substr(at, html.find("</section>", at) - at);
  EXPECT_NE(parts.find("data-slowest-rank=\"1\""), std::string::npos) << parts;
  EXPECT_NE(parts.find("Slowest rank: rank 1"), std::string::npos) << parts;
  // Rank 0's bar: mostly waiting (communication), rank 1's: mostly compute.
  std::smatch match;
  static const std::regex rank_bar(R"re(data-label="rank 0"><rect data-layer="compute" data-value="([0-9.e-]+)"[^>]*>)re"
                                   R"re(<title>[^<]*</title></rect><rect data-layer="communication" data-value="([0-9.e-]+)")re");
  ASSERT_TRUE(std::regex_search(parts, match, rank_bar)) << parts;
  EXPECT_GT(std::stod(match[2]), std::stod(match[1])) << "rank 0 waits for rank 1 longer than it computes";
}

}  // namespace
}  // namespace primus::testing
