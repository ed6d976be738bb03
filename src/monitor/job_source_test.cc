#include "monitor/job_source.h"
#include "monitor/job_list.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include "http_test_server.h"
#include "monitor/job_view_text.h"
#include "util/process_stamp.h"
#include "util/clock.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::monitor {
namespace {

std::string View(const std::string& run_id, const std::string& state) {
  return R"({"format": "primus-job-telemetry/1", "job": {"run_id": ")" + run_id + R"(", "state": ")" + state +
         R"(", "interval_s": 5}, "nodes": []})";
}

class JobSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    places_.runs_dir = JoinPath(dir_.path(), "tmp/primus-0");
    places_.output_dir = JoinPath(dir_.path(), "output");
  }
  std::string Write(const std::string& relative, const std::string& text) {
    std::string path = JoinPath(dir_.path(), relative);
    EXPECT_TRUE(MakeDirs(DirName(path)).ok());
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }
  void SetTime(const std::string& path, double when) {
    utimbuf times{static_cast<time_t>(when), static_cast<time_t>(when)};
    ASSERT_EQ(::utime(path.c_str(), &times), 0);
  }
  ScopedTempDir dir_;
  SearchPlaces places_;
};

TEST_F(JobSourceTest, DirectoriesOfEachKindLeadToTheirJobJson) {
  std::string in_experiment = Write("output/exp_1/logs/telemetry/job.json", View("a", "running"));
  std::string in_log_dir = Write("tmp/primus-0/run-b/telemetry/job.json", View("b", "running"));
  EXPECT_EQ(ResolveTarget(JoinPath(dir_.path(), "output/exp_1"), places_)->file, in_experiment);
  EXPECT_EQ(ResolveTarget(JoinPath(dir_.path(), "output/exp_1/logs"), places_)->file, in_experiment);
  EXPECT_EQ(ResolveTarget(JoinPath(dir_.path(), "tmp/primus-0/run-b"), places_)->file, in_log_dir);
  EXPECT_EQ(ResolveTarget(in_log_dir, places_)->file, in_log_dir);
}

TEST_F(JobSourceTest, ARunIdIsTheAgentsLogDirectoryOrAnExperimentNamingTheRun) {
  std::string in_log_dir = Write("tmp/primus-0/20261125-093000-1a2b3c/telemetry/job.json", View("x", "running"));
  std::string in_experiment = Write("output/tiny_2026/logs/telemetry/job.json", View("20261125-100000-ffffff", "running"));
  EXPECT_EQ(ResolveTarget("20261125-093000-1a2b3c", places_)->file, in_log_dir);
  EXPECT_EQ(ResolveTarget("20261125-100000-ffffff", places_)->file, in_experiment);
}

TEST_F(JobSourceTest, ASlurmJobIdIsTheExperimentDirectorySbatchNamed) {
  std::string view = Write("output/run_4242/logs/telemetry/job.json", View("r", "running"));
  EXPECT_EQ(ResolveTarget("4242", places_)->file, view);
}

TEST_F(JobSourceTest, HostAndPortIsTheMetricsPort) {
  auto source = ResolveTarget("node0:9400", places_);
  ASSERT_TRUE(source.ok()) << source.error().Format();
  EXPECT_TRUE(source->http);
  EXPECT_EQ(source->Describe(), "http://node0:9400/job.json");
  EXPECT_EQ(ResolveTarget("http://10.0.0.1:9400/job.json", places_)->Describe(), "http://10.0.0.1:9400/job.json");
  auto https = ResolveTarget("https://node0:9400", places_);
  ASSERT_FALSE(https.ok());
  EXPECT_EQ(https.error().code, ExitCode::kUsage);
}

TEST_F(JobSourceTest, NothingFoundNamesEveryPlaceLookedAt) {
  auto missing = ResolveTarget("4242", places_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kUnavailable);
  EXPECT_NE(missing.error().message.find(JoinPath(places_.runs_dir, "4242/telemetry/job.json")), std::string::npos)
      << missing.error().message;
  EXPECT_NE(missing.error().message.find("output/*_4242/logs/telemetry/job.json (Slurm job 4242)"), std::string::npos)
      << missing.error().message;
  Write("output/empty/logs/rank0.log", "");
  auto empty = ResolveTarget(JoinPath(dir_.path(), "output/empty"), places_);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("output/empty/logs/telemetry/job.json"), std::string::npos) << empty.error().message;
  EXPECT_NE(empty.error().hint.find("--telemetry-interval"), std::string::npos);
}

std::string ViewFrom(const std::string& run_id, const std::string& state, const std::string& cwd, double started) {
  return R"({"format": "primus-job-telemetry/1", "job": {"run_id": ")" + run_id + R"(", "state": ")" + state +
         R"(", "interval_s": 5, "cwd": ")" + cwd + R"(", "started": )" + std::to_string(started) + "}, \"nodes\": []}";
}

TEST_F(JobSourceTest, WithoutATargetTheRunningJobFromHereIsTakenAndSeveralAreListed) {
  double now = 2000000000;
  std::string old_run = Write("tmp/primus-0/old/telemetry/job.json", ViewFrom("old", "running", "/elsewhere", now - 50));
  std::string newer = Write("output/exp/logs/telemetry/job.json", ViewFrom("new", "running", "/here", now - 20));
  std::string ended = Write("tmp/primus-0/done/telemetry/job.json", ViewFrom("done", "succeeded", "/here", now - 10));
  std::string gone = Write("tmp/primus-0/gone/telemetry/job.json", ViewFrom("gone", "running", "/here", now - 5000));
  SetTime(old_run, now - 10);
  SetTime(newer, now - 2);
  SetTime(ended, now - 1);
  SetTime(gone, now - 3600);  // its agent died an hour ago
  std::vector<JobEntry> jobs = ListJobs(places_, now);
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].run_id, "done") << "newest first";
  EXPECT_EQ(jobs[3].state, "gone") << "a view no longer written is not running";
  EXPECT_FALSE(jobs[3].running);
  // From /here, the one running job started there; from elsewhere, two run: listed, not guessed.
  auto here = ChooseJob(jobs, "/here", JobChoice::kRunning);
  ASSERT_TRUE(here.ok()) << here.error().Format();
  EXPECT_EQ(here->view_file, newer);
  auto elsewhere = ChooseJob(jobs, "/tmp", JobChoice::kRunning);
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().code, ExitCode::kUsage);
  EXPECT_NE(elsewhere.error().message.find("2 of your jobs are running; name one:\n    new  running"), std::string::npos)
      << elsewhere.error().message;
  // stop takes only a job started here: from elsewhere, none.
  auto stop_elsewhere = ChooseJob(jobs, "/tmp", JobChoice::kRunningHere);
  ASSERT_FALSE(stop_elsewhere.ok());
  EXPECT_EQ(stop_elsewhere.error().code, ExitCode::kUnavailable);
  // None running: nothing for monitor; the latest from here for logs.
  SetTime(newer, now - 3600);
  SetTime(old_run, now - 3600);
  jobs = ListJobs(places_, now);
  auto none = ChooseJob(jobs, "/here", JobChoice::kRunning);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ExitCode::kUnavailable);
  auto latest = ChooseJob(jobs, "/here", JobChoice::kRunningOrLatest);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->run_id, "done");
}

TEST_F(JobSourceTest, ReadingAFileAndCheckingItIsAJobView) {
  std::string path = Write("view.json", View("a", "running"));
  JobSource source;
  source.file = path;
  auto text = ReadJobViewText(source, 1);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(ParseJobView(*text, path).ok());
  auto not_json = ParseJobView("{\"format\": ", "x.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.error().message.find("x.json is not JSON"), std::string::npos);
  auto other = ParseJobView(R"({"format": "primus-job-telemetry/2"})", "x.json");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("format \"primus-job-telemetry/2\""), std::string::npos) << other.error().message;
  source.file = JoinPath(dir_.path(), "missing.json");
  auto missing = ReadJobViewText(source, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kUnavailable);
}

// A view that says "running", left by an agent of this host that is gone.
TEST_F(JobSourceTest, AViewWhoseAgentIsGoneEndedWithoutARecord) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  ProcessStamp self = ThisProcess();
  auto view_by = [&](int pid, uint64_t start) {
    return R"({"format": "primus-job-telemetry/1", "job": {"run_id": "a", "state": "running", "agent": {"host": ")" +
           self.host + R"(", "pid": )" + std::to_string(pid) + R"(, "start": )" + std::to_string(start) +
           R"(}}, "nodes": []})";
  };
  auto gone = ParseJobView(view_by(child, 1), "job.json");
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_EQ(EndedState(*gone), kEndedWithoutRecord);
  auto alive = ParseJobView(view_by(self.pid, self.start), "job.json");
  ASSERT_TRUE(alive.ok());
  EXPECT_EQ(EndedState(*alive), "");
  // Such a view is not a running job to attach to.
  Write("tmp/primus-0/r1/telemetry/job.json", view_by(child, 1));
  std::vector<JobEntry> jobs = ListJobs(places_, static_cast<double>(::time(nullptr)));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_FALSE(jobs[0].running);
  EXPECT_FALSE(ChooseJob(jobs, CurrentDir(), JobChoice::kRunning).ok());
}

TEST_F(JobSourceTest, ReadingFromAPortNobodyListensOnIsUnavailable) {
  auto source = ResolveTarget("127.0.0.1:1", places_);
  ASSERT_TRUE(source.ok());
  auto text = ReadJobViewText(*source, 1);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ExitCode::kUnavailable);
  EXPECT_NE(text.error().message.find("127.0.0.1:1"), std::string::npos) << text.error().message;
}

TEST_F(JobSourceTest, TheMetricsPortServesTheSameView) {
  std::string body = View("served", "running");
  testing::HttpTestServer server([&](const std::string& request) {
    bool asked = request.starts_with("GET /job.json ");
    std::string status = asked ? "200 OK" : "404 Not Found";
    std::string content = asked ? body : "";
    return testing::CannedReply{{"HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
                                        std::to_string(content.size()) + "\r\n\r\n" + content}};
  });
  auto source = ResolveTarget("127.0.0.1:" + std::to_string(server.port()), places_);
  ASSERT_TRUE(source.ok()) << source.error().Format();
  auto text = ReadJobViewText(*source, 5);
  ASSERT_TRUE(text.ok()) << text.error().Format();
  EXPECT_EQ(*text, body);
}

// A multi-node job, found where node 0's view reaches (a shared ./output):
// listed once, with every node's host, and not running once its view stops
// being rewritten (node 0's agent on another host says nothing).
TEST_F(JobSourceTest, AMultiNodeJobIsListedOnceWithEveryNodesHost) {
  std::string view = Write("output/exp_4242/logs/telemetry/job.json",
                           R"({"format": "primus-job-telemetry/1", "job": {"run_id": "r", "state": "running",
                                "interval_s": 5, "nnodes": 2, "world_size": 16},
                               "nodes": [{"host": "node1", "node_rank": 0}, {"host": "node2", "node_rank": 1}]})");
  std::vector<JobEntry> jobs = ListJobs(places_, WallSeconds());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].hosts, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(jobs[0].nnodes, 2);
  EXPECT_TRUE(jobs[0].running);
  EXPECT_EQ(jobs[0].ToJson()["hosts"], nlohmann::json::array({"node1", "node2"}));
  SetTime(view, WallSeconds() - 3600);
  EXPECT_EQ(ListJobs(places_, WallSeconds())[0].state, "gone");
}

}  // namespace
}  // namespace primus::monitor
