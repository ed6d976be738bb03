// The metrics port (--metrics-port) through the real binary: a real
// Prometheus scraping a running job and answering queries about it, the
// answer checked by promtool, the port answering between restarts, and the
// launch refused when the port is taken. Dry runs and manifests show it.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "free_port.h"
#include "prometheus_server.h"
#include "run_process.h"
#include "start_process.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::HttpGet;
using testing::ProcessOptions;
using testing::StartProcess;
using testing::TempDir;
using testing::WaitFor;
using testing::WaitForExit;

// Steps until `stop` exists (at most 120 s), a line of docs/monitor.md's
// metrics each step when the agent names a metrics file.
constexpr char kTrainer[] = R"(import json, os, sys, time
stop = sys.argv[1]
out = open(os.environ["PRIMUS_METRICS_FILE"], "a", buffering=1) if "PRIMUS_METRICS_FILE" in os.environ else None
step = 0
start = time.time()
while not os.path.exists(stop) and time.time() - start < 120:
    time.sleep(0.2)
    step += 1
    if out: out.write(json.dumps({"step": step, "total_steps": 1000, "loss": 5.0 / step, "step_time_s": 0.2}) + "\n")
print("rank", os.environ["RANK"], "stopped at step", step, flush=True)
)";

// An agent started in the background, stopped by the stop file (or SIGKILL at teardown).
class RunningJob {
 public:
  RunningJob(const TempDir& dir, const std::vector<std::string>& args) : dir_(dir) {
    std::vector<std::string> argv = {PRIMUS_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = StartProcess(argv, dir.path() + "/agent.out", dir.path() + "/agent.err");
  }
  ~RunningJob() {
    if (pid_ > 0 && exit_code_ == -3) {
      kill(pid_, SIGKILL);
      WaitForExit(pid_, 10);
    }
  }
  bool started() const { return pid_ > 0; }
  int Stop(double timeout_s) {
    dir_.Write("stop", "");
    exit_code_ = WaitForExit(pid_, timeout_s);
    return exit_code_;
  }
  std::string Output() const { return testing::Slurp(dir_.path() + "/agent.out") + testing::Slurp(dir_.path() + "/agent.err"); }

 private:
  const TempDir& dir_;
  pid_t pid_ = -1;
  int exit_code_ = -3;
};

std::string PromtoolCheck(const TempDir& dir, const std::string& text) {
  std::string path = dir.Write("metrics.txt", text);
  testing::ProcessResult checked = testing::RunProcess({"sh", "-c", "promtool check metrics < " + path + " 2>&1"});
  return checked.exit_code == 0 ? "" : "promtool: exit " + std::to_string(checked.exit_code) + ": " + checked.all();
}

TEST(MetricsScrapeTest, PrometheusScrapesARunningJob) {
  TempDir dir;
  std::string script = dir.Write("trainer.py", kTrainer);
  int port = testing::FreePort();
  RunningJob job(dir, {"direct", "--nproc-per-node", "2", "--metrics-port", std::to_string(port), "--log-dir",
                       dir.path() + "/logs", "--", "run", "python3", script, dir.path() + "/stop"});
  ASSERT_TRUE(job.started());
  std::string error;
  auto prometheus = testing::PrometheusServer::Start({"127.0.0.1:" + std::to_string(port)}, &error);
  ASSERT_TRUE(prometheus) << error;

  // Scraped every second: the job's size and both ranks appear.
  std::optional<double> world_size;
  ASSERT_TRUE(WaitFor([&] { return (world_size = prometheus->QueryValue("primus_job_world_size")).has_value(); }, 60))
      << prometheus->last_error() << "\n" << job.Output() << prometheus->Log();
  EXPECT_EQ(*world_size, 2);
  EXPECT_EQ(prometheus->QueryValue("up{job=\"primus\"}"), 1.0);
  std::optional<double> running;
  EXPECT_TRUE(WaitFor([&] { return (running = prometheus->QueryValue("primus_rank_running{rank=\"1\",local_rank=\"1\"}")).has_value(); }, 30))
      << prometheus->last_error();
  EXPECT_EQ(running, 1.0);
  auto ranks = prometheus->Query("count(primus_rank_running)");
  ASSERT_TRUE(ranks) << prometheus->last_error();
  EXPECT_EQ(prometheus->QueryValue("count(primus_rank_running)"), 2.0);
  EXPECT_EQ(prometheus->QueryValue("primus_job_nodes"), 1.0);
  EXPECT_EQ(prometheus->QueryValue("primus_job_restarts_total"), 0.0);
  // Once the agent samples its workers' metrics files, steps rise.
  if (prometheus->QueryValue("primus_rank_steps_total{rank=\"0\"}")) {
    double first = *prometheus->QueryValue("max(primus_rank_steps_total)");
    EXPECT_TRUE(WaitFor([&] { return prometheus->QueryValue("max(primus_rank_steps_total)").value_or(0) > first; }, 30));
  }

  // What Prometheus read is what promtool accepts.
  auto metrics = HttpGet(port, "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->headers.find("Content-Type: text/plain; version=0.0.4; charset=utf-8"), std::string::npos);
  EXPECT_EQ(PromtoolCheck(dir, metrics->body), "") << metrics->body;

  // /job.json: the view of docs/monitor.md with both workers.
  auto view_reply = HttpGet(port, "/job.json");
  ASSERT_TRUE(view_reply);
  EXPECT_NE(view_reply->headers.find("Content-Type: application/json"), std::string::npos);
  auto view = nlohmann::json::parse(view_reply->body, nullptr, false);
  ASSERT_FALSE(view.is_discarded()) << view_reply->body;
  EXPECT_EQ(view["format"], "primus-job-telemetry/1");
  EXPECT_EQ(view["job"]["state"], "running");
  EXPECT_EQ(view["job"]["world_size"], 2);
  ASSERT_EQ(view["nodes"].size(), 1u);
  ASSERT_EQ(view["nodes"][0]["workers"].size(), 2u);
  EXPECT_GT(view["nodes"][0]["workers"][1]["pid"].get<int>(), 0);
  EXPECT_EQ(HttpGet(port, "/nothing")->status, 404);

  EXPECT_EQ(job.Stop(60), 0) << job.Output();
  EXPECT_NE(job.Output().find("metrics: http://"), std::string::npos) << job.Output();
}

TEST(MetricsScrapeTest, ThePortAnswersWhileTheAgentWaitsToRestart) {
  TempDir dir;
  int port = testing::FreePort();
  // The first attempt fails at once; the restart comes 4 s later.
  std::string script = dir.Write("fail_once.sh", "if [ ! -e \"$1\" ]; then : > \"$1\"; exit 3; fi; exit 0\n");
  RunningJob job(dir, {"direct", "--nproc-per-node", "1", "--metrics-port", std::to_string(port), "--max-restarts",
                       "1", "--restart-backoff", "4", "--log-dir", dir.path() + "/logs", "--", "run", "sh", script,
                       dir.path() + "/failed"});
  ASSERT_TRUE(job.started());
  std::optional<testing::HttpReply> during;
  ASSERT_TRUE(WaitFor(
      [&] {
        during = HttpGet(port, "/metrics");
        return during && during->body.find("primus_job_restarts_total 1") != std::string::npos;
      },
      20))
      << (during ? during->body : "no answer") << job.Output();
  auto view = nlohmann::json::parse(HttpGet(port, "/job.json")->body);
  EXPECT_EQ(view["job"]["state"], "restarting");
  EXPECT_EQ(view["nodes"][0]["workers"][0]["state"], "exited");
  EXPECT_NE(during->body.find("primus_rank_running{node=\"0\""), std::string::npos);
  EXPECT_EQ(job.Stop(30), 0) << job.Output();
}

TEST(MetricsPortTest, APortInUseStopsTheLaunchNamingTheFlag) {
  int taken = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin6_port);
  TempDir dir;
  testing::ProcessResult result = testing::RunPrimus(
      {"direct", "--metrics-port", std::to_string(port), "--log-dir", dir.path(), "--", "run", "sh", "-c",
       "echo started > " + dir.path() + "/ran"});
  ::close(taken);
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.all().find("metrics port " + std::to_string(port) + " is already in use"), std::string::npos)
      << result.all();
  EXPECT_NE(result.all().find("--metrics-port"), std::string::npos);
  EXPECT_EQ(testing::Slurp(dir.path() + "/ran"), "") << "no worker started";
}

TEST(MetricsPortTest, ABadPortIsAUsageError) {
  testing::ProcessResult result = testing::RunPrimus({"direct", "--metrics-port", "70000", "--", "run", "true"});
  EXPECT_EQ(result.exit_code, 2) << result.all();
  EXPECT_NE(result.all().find("metrics port 70000 is not a TCP port"), std::string::npos) << result.all();
}

TEST(MetricsPortTest, DryRunShowsThePortAndConfigShowItsOrigin) {
  testing::ProcessResult plan =
      testing::RunPrimus({"--dry-run", "direct", "--metrics-port", "9400", "--", "run", "true"});
  EXPECT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("metrics: port 9400 serves /metrics (Prometheus) and /job.json"), std::string::npos)
      << plan.out;
  testing::ProcessResult shown = testing::RunPrimus({"--set", "direct.metrics_port=9401", "config", "show", "--origin"});
  EXPECT_NE(shown.out.find("metrics_port: 9401"), std::string::npos) << shown.all();
}

TEST(MetricsPortTest, TheK8sPodsExposeThePort) {
  testing::ProcessResult manifest = testing::RunPrimus({"k8s", "manifest", "-N", "2", "--image", "img:1", "--name",
                                                         "job", "--", "direct", "--metrics-port", "9400", "--", "run",
                                                         "true"});
  ASSERT_EQ(manifest.exit_code, 0) << manifest.all();
  EXPECT_NE(manifest.out.find("name: metrics"), std::string::npos) << manifest.out;
  EXPECT_NE(manifest.out.find("containerPort: 9400"), std::string::npos);
  EXPECT_NE(manifest.out.find("prometheus.io/port"), std::string::npos);
  EXPECT_NE(manifest.out.find("\"9400\""), std::string::npos) << "the annotation's value is a string";
  EXPECT_NE(manifest.out.find("--metrics-port"), std::string::npos);
  testing::ProcessResult plain =
      testing::RunPrimus({"k8s", "manifest", "-N", "2", "--image", "img:1", "--name", "job", "--", "run", "true"});
  EXPECT_EQ(plain.out.find("metrics"), std::string::npos) << plain.out;
}

}  // namespace
}  // namespace primus
