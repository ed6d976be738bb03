// `primus-cli monitor` through the real binary, reading job views in the
// documented format (docs/monitor.md) that the test writes and rewrites.
// MonitorTest: targets, exit codes, --once --json, and the plain view in a
// pipe following a job.json being rewritten (about a second each).
// MonitorTerminalTest: the view in a real terminal, a detached tmux session
// of a fixed size: redrawn in place, fitted to the window, the terminal given
// back after Ctrl-C and when the job ends (seconds each: slow).
// MonitorRealJobTest: a real two-worker job under the agent, its workers
// writing metrics lines, watched through its log directory and its metrics
// port (seconds each: slow; skipped by a binary without the agent's
// telemetry or metrics port).
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_process.h"
#include "tmux.h"
#include "start_process.h"
#include "util/files.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

using nlohmann::json;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;
using testing::RunProcess;
using testing::Tmux;
using testing::WaitFor;

const std::string kRunId = "20261125-093000-1a2b3c";

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// A two-node job at `step`, rank 3 a straggler.
json JobView(int step, const std::string& state = "running") {
  json view = {{"format", "primus-job-telemetry/1"},
               {"job", {{"run_id", kRunId}, {"coordinator", "host1"}, {"time", Now()}, {"state", state},
                        {"generation", 0}, {"restarts", 0}, {"nnodes", 2}, {"world_size", 4}, {"interval_s", 0.2},
                        {"step", step}, {"total_steps", 200}, {"progress", step / 200.0}, {"eta_s", (200 - step) * 0.42},
                        {"loss", 3.21}, {"tokens_per_s", 19752.0}, {"median_step_time_s", 0.42}}},
               {"stragglers", {{{"kind", "rank"}, {"rank", 3}, {"node_rank", 1}, {"host", "host2"}, {"step_time_s", 0.61},
                                {"median_step_time_s", 0.42}, {"ratio", 1.45}, {"samples", 3}}}},
               {"nodes", json::array()}};
  for (int node = 0; node < 2; ++node) {
    json sample = {{"node_rank", node}, {"host", "host" + std::to_string(node + 1)}, {"time", Now()}, {"generation", 0},
                   {"age_s", 0.1},
                   {"host_stats", {{"cpus", 16}, {"cpu_percent", 180.0}, {"mem_used_bytes", 8e9}, {"mem_total_bytes", 1.3e11}}},
                   {"workers", json::array()}};
    for (int local = 0; local < 2; ++local) {
      int rank = node * 2 + local;
      sample["workers"].push_back({{"rank", rank}, {"local_rank", local}, {"pid", 1000 + rank}, {"state", "running"},
                                   {"cpu_percent", 99.0}, {"rss_bytes", 1.2e9}, {"step", step}, {"loss", 3.21},
                                   {"tokens_per_s", 4938.0}, {"step_time_s", rank == 3 ? 0.61 : 0.42}});
    }
    view["nodes"].push_back(sample);
  }
  return view;
}

class MonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_dir_ = JoinPath(dir_.path(), "logs");
    ASSERT_TRUE(MakeDirs(JoinPath(log_dir_, "telemetry")).ok());
  }
  void WriteView(const json& view) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(log_dir_, "telemetry/job.json"), view.dump()).ok());
  }
  ProcessOptions Options() const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    options.env["TMPDIR"] = dir_.path();
    options.env["NO_COLOR"] = std::nullopt;
    options.timeout_s = 30;
    return options;
  }
  ProcessResult Monitor(std::vector<std::string> args) {
    args.insert(args.begin(), "monitor");
    return RunPrimus(args, Options());
  }
  testing::TempDir dir_;
  std::string log_dir_;
};

TEST_F(MonitorTest, OnceJsonPrintsTheViewAsRead) {
  std::string text = JobView(120).dump(2);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(log_dir_, "telemetry/job.json"), text).ok());
  ProcessResult once = Monitor({dir_.path(), "--once", "--json"});
  EXPECT_EQ(once.exit_code, 0) << once.all();
  EXPECT_EQ(once.out, text + "\n");
  // The same through direct, by log directory and by the agent's default place for a run id.
  ProcessResult direct = RunPrimus({"direct", "--", "monitor", log_dir_, "--once", "--json"}, Options());
  EXPECT_EQ(direct.exit_code, 0) << direct.all();
  EXPECT_EQ(direct.out, text + "\n");
  std::string by_run_dir = JoinPath(dir_.path(), "primus-" + std::to_string(getuid()) + "/" + kRunId);
  ASSERT_TRUE(MakeDirs(JoinPath(by_run_dir, "telemetry")).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(by_run_dir, "telemetry/job.json"), text).ok());
  ProcessResult by_id = Monitor({kRunId, "--once", "--json"});
  EXPECT_EQ(by_id.exit_code, 0) << by_id.all();
  EXPECT_EQ(by_id.out, text + "\n");
}

TEST_F(MonitorTest, OnceShowsTheJobAndItsStraggler) {
  WriteView(JobView(120));
  ProcessResult once = Monitor({dir_.path(), "--once"});
  EXPECT_EQ(once.exit_code, 0) << once.all();
  EXPECT_NE(once.out.find("job " + kRunId + "  RUNNING"), std::string::npos) << once.out;
  EXPECT_NE(once.out.find("step 120/200"), std::string::npos) << once.out;
  EXPECT_NE(once.out.find("! rank 3 on host2 (node 1): step 0.610s, 1.45x the median 0.420s"), std::string::npos) << once.out;
  EXPECT_NE(once.out.find("slow 1.45x"), std::string::npos) << once.out;
  EXPECT_EQ(once.out.find('\x1b'), std::string::npos) << "no escape codes without a terminal";
}

TEST_F(MonitorTest, AFailedJobGivesOneAndASucceededOneZero) {
  WriteView(JobView(150, "failed"));
  EXPECT_EQ(Monitor({log_dir_, "--once"}).exit_code, 1);
  EXPECT_EQ(Monitor({log_dir_, "--once", "--json"}).exit_code, 1);
  WriteView(JobView(200, "succeeded"));
  ProcessResult live = Monitor({log_dir_});
  EXPECT_EQ(live.exit_code, 0) << live.all();
  EXPECT_NE(live.out.find("SUCCEEDED"), std::string::npos) << live.out;
}

TEST_F(MonitorTest, MissingTargetsAreExitFourNamingWhatWasTried) {
  ProcessResult missing = Monitor({"no-such-run", "--once"});
  EXPECT_EQ(missing.exit_code, 4) << missing.all();
  EXPECT_NE(missing.err.find("no job 'no-such-run'"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("primus-" + std::to_string(getuid()) + "/no-such-run/telemetry/job.json"), std::string::npos)
      << missing.err;
  ProcessResult none = Monitor({"--once"});
  EXPECT_EQ(none.exit_code, 4) << none.all();
  EXPECT_NE(none.err.find("none of your jobs is running on this host"), std::string::npos) << none.err;
  ProcessResult refused = Monitor({"127.0.0.1:1", "--once"});
  EXPECT_EQ(refused.exit_code, 4) << refused.all();
  EXPECT_NE(refused.err.find("127.0.0.1:1"), std::string::npos) << refused.err;
  ASSERT_TRUE(WriteFileAtomic(JoinPath(log_dir_, "telemetry/job.json"), "{\"format\": \"other\"}").ok());
  ProcessResult other = Monitor({log_dir_, "--once"});
  EXPECT_EQ(other.exit_code, 4) << other.all();
  EXPECT_NE(other.err.find("is not a job view"), std::string::npos) << other.err;
}

TEST_F(MonitorTest, UsageErrorsAreExitTwo) {
  ProcessResult two = Monitor({"a", "b"});
  EXPECT_EQ(two.exit_code, 2) << two.all();
  EXPECT_NE(two.err.find("monitor takes one TARGET"), std::string::npos) << two.err;
  ProcessResult interval = Monitor({"--interval", "0"});
  EXPECT_EQ(interval.exit_code, 2) << interval.all();
  ProcessResult typo = Monitor({"--onec"});
  EXPECT_EQ(typo.exit_code, 2) << typo.all();
  EXPECT_NE(typo.err.find("--once"), std::string::npos) << typo.err;
  ProcessResult help = Monitor({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos) << help.out;
}

TEST_F(MonitorTest, WithoutATargetTheRunningJobIsFound) {
  std::string run_dir = JoinPath(dir_.path(), "primus-" + std::to_string(getuid()) + "/" + kRunId);
  ASSERT_TRUE(MakeDirs(JoinPath(run_dir, "telemetry")).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(run_dir, "telemetry/job.json"), JobView(42).dump()).ok());
  ProcessResult once = Monitor({"--once"});
  EXPECT_EQ(once.exit_code, 0) << once.all();
  EXPECT_NE(once.out.find("step 42/200"), std::string::npos) << once.out;
}

TEST_F(MonitorTest, RunsInASlurmAllocationsShellAndFindsTheJobById) {
  // The experiment directory `slurm sbatch` made for job 4242.
  std::string job_dir = JoinPath(dir_.path(), "output/run_4242/logs/telemetry");
  ASSERT_TRUE(MakeDirs(job_dir).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(job_dir, "job.json"), JobView(77).dump()).ok());
  ProcessOptions allocation = Options();
  allocation.env["SLURM_JOB_ID"] = "4242";
  allocation.env["SLURM_JOB_NUM_NODES"] = "2";
  allocation.env["SLURM_JOB_NODELIST"] = "n[1-2]";
  ProcessResult once = RunPrimus({"monitor", "4242", "--once"}, allocation);
  EXPECT_EQ(once.exit_code, 0) << once.all();
  EXPECT_NE(once.out.find("step 77/200"), std::string::npos) << once.out;
  // A launch there is refused: monitor starts no workers, so it is not.
  ProcessResult launch = RunPrimus({"run", "true"}, allocation);
  EXPECT_EQ(launch.exit_code, 4) << launch.all();
}

TEST_F(MonitorTest, InAPipeEachRefreshIsAPlainBlockThatFollowsTheFile) {
  WriteView(JobView(120));
  std::string out = JoinPath(dir_.path(), "piped.txt");
  std::string command = ShellQuote(PRIMUS_BINARY) + " monitor " + ShellQuote(log_dir_) + " --interval 0.2 | cat > " +
                        ShellQuote(out);
  pid_t pid = testing::StartProcess({"sh", "-c", command}, JoinPath(dir_.path(), "sh.out"),
                                    JoinPath(dir_.path(), "sh.err"), Options());
  ASSERT_GT(pid, 0);
  auto has = [&](const std::string& text) { return testing::Slurp(out).find(text) != std::string::npos; };
  EXPECT_TRUE(WaitFor([&] { return has("step 120/200"); }, 20)) << testing::Slurp(out);
  WriteView(JobView(150));
  EXPECT_TRUE(WaitFor([&] { return has("step 150/200"); }, 20)) << testing::Slurp(out);
  WriteView(JobView(200, "succeeded"));
  EXPECT_EQ(testing::WaitForExit(pid, 20), 0) << testing::Slurp(JoinPath(dir_.path(), "sh.err"));
  std::string text = testing::Slurp(out);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "escape codes in a pipe";
  EXPECT_NE(text.find("SUCCEEDED"), std::string::npos) << text;
  // Blocks: one per refresh, each headed by its time and the file.
  size_t blocks = 0;
  for (size_t at = text.find("--- "); at != std::string::npos; at = text.find("--- ", at + 1)) ++blocks;
  EXPECT_GE(blocks, 3u) << text;
  EXPECT_NE(text.find(JoinPath(log_dir_, "telemetry/job.json")), std::string::npos) << text;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

class MonitorTerminalTest : public MonitorTest {
 protected:
  void SetUp() override {
    MonitorTest::SetUp();
    if (FindExecutable("tmux").empty()) GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it)";
  }
  std::string Command() const {
    return ShellQuote(PRIMUS_BINARY) + " monitor " + ShellQuote(log_dir_) + " --interval 0.2";
  }
};

TEST_F(MonitorTerminalTest, RedrawsInPlaceAndGivesTheTerminalBackAfterCtrlC) {
  WriteView(JobView(120));
  Tmux tmux(dir_.path(), 100, 30);
  ASSERT_TRUE(tmux.ok()) << tmux.error();
  tmux.Type(Command());
  tmux.Keys("Enter");
  ASSERT_TRUE(WaitFor([&] { return tmux.Screen().find("step 120/200") != std::string::npos; }, 20)) << tmux.Screen();
  EXPECT_EQ(tmux.Format("#{alternate_on}"), "1");
  EXPECT_EQ(tmux.Format("#{cursor_flag}"), "0") << "the cursor is hidden while the view is drawn";

  WriteView(JobView(150));
  ASSERT_TRUE(WaitFor([&] { return tmux.Screen().find("step 150/200") != std::string::npos; }, 20)) << tmux.Screen();
  std::string screen = tmux.Screen();
  EXPECT_EQ(screen.find("step 120/200"), std::string::npos) << screen;
  EXPECT_EQ(Count(screen, "job " + kRunId), 1u) << "one copy of the view, not a scrolled list:\n" << screen;
  EXPECT_EQ(tmux.Format("#{history_size}"), "0") << "nothing scrolled off the screen";
  EXPECT_EQ(screen.find("job " + kRunId), 0u) << "drawn from the top left:\n" << screen;
  EXPECT_NE(screen.find("slow 1.45x"), std::string::npos) << screen;
  // Every row fits the 100 columns: tmux would wrap a longer one onto the next row.
  for (const std::string& row : Split(screen, '\n')) EXPECT_LE(row.size(), 100u * 3) << row;
  EXPECT_NE(tmux.Screen(true).find("\x1b["), std::string::npos) << "colours on a terminal";

  tmux.Keys("C-c");
  ASSERT_TRUE(WaitFor([&] { return tmux.Format("#{alternate_on}") == "0"; }, 10)) << tmux.Screen();
  EXPECT_EQ(tmux.Format("#{cursor_flag}"), "1") << "the cursor is back";
  screen = tmux.Screen();
  EXPECT_EQ(screen.find("job " + kRunId), std::string::npos) << "the shell's own screen is back:\n" << screen;
  // Typed keys echo again: the terminal's modes were restored.
  tmux.Type("echo back-$((6*7))");
  tmux.Keys("Enter");
  EXPECT_TRUE(WaitFor([&] { return tmux.Screen().find("back-42") != std::string::npos &&
                                   tmux.Screen().find("echo back-$((6*7))") != std::string::npos; },
                      10))
      << tmux.Screen();
}

TEST_F(MonitorTerminalTest, FitsASmallWindowAndLeavesTheLastViewWhenTheJobEnds) {
  WriteView(JobView(120));
  Tmux tmux(dir_.path(), 80, 12);
  ASSERT_TRUE(tmux.ok()) << tmux.error();
  tmux.Type(Command() + "; echo exit=$?");
  tmux.Keys("Enter");
  ASSERT_TRUE(WaitFor([&] { return tmux.Screen().find("step 120/200") != std::string::npos; }, 20)) << tmux.Screen();
  std::string screen = tmux.Screen();
  EXPECT_EQ(screen.find("job " + kRunId), 0u) << "the header stays on a short window:\n" << screen;
  EXPECT_NE(screen.find("ranks shown"), std::string::npos) << "a short window summarises the ranks:\n" << screen;
  EXPECT_EQ(tmux.Format("#{history_size}"), "0");

  WriteView(JobView(200, "failed"));
  ASSERT_TRUE(WaitFor([&] { return tmux.Screen().find("exit=1") != std::string::npos; }, 20)) << tmux.Screen();
  EXPECT_EQ(tmux.Format("#{alternate_on}"), "0");
  EXPECT_EQ(tmux.Format("#{cursor_flag}"), "1");
  EXPECT_NE(tmux.Screen().find("FAILED"), std::string::npos) << "the last view stays on the shell's screen:\n" << tmux.Screen();
}

// Each worker writes a metrics line per step (rank 1 slower) for about `seconds`.
const char* kMetricsScript = R"(
import json, os, sys, time
rank = int(os.environ["RANK"])
steps = int(sys.argv[1])
out = open(os.environ["PRIMUS_METRICS_FILE"], "a", buffering=1)
for step in range(1, steps + 1):
    start = time.time()
    time.sleep(0.15 if rank == 1 else 0.1)
    dt = time.time() - start
    out.write(json.dumps({"step": step, "total_steps": steps, "loss": 5.0 / step, "tokens_per_s": 1024 / dt,
                          "step_time_s": dt}) + "\n")
)";

class MonitorRealJobTest : public MonitorTest {
 protected:
  void SetUp() override {
    MonitorTest::SetUp();
    std::string help = RunPrimus({"direct", "--help"}, Options()).out;
    if (help.find("--telemetry-interval") == std::string::npos) GTEST_SKIP() << "this build's agent has no telemetry";
    metrics_port_ = help.find("--metrics-port") != std::string::npos;
    script_ = JoinPath(dir_.path(), "steps.py");
    ASSERT_TRUE(WriteFileAtomic(script_, kMetricsScript).ok());
    job_log_dir_ = JoinPath(dir_.path(), "job-logs");
  }
  // Starts the job; `extra` goes among direct's flags.
  pid_t StartJob(int steps, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {PRIMUS_BINARY, "direct", "--nproc-per-node", "2", "--telemetry-interval", "0.5",
                                     "--log-dir", job_log_dir_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", "run", "/usr/bin/python3", script_});
    argv.push_back(std::to_string(steps));
    return testing::StartProcess(argv, JoinPath(dir_.path(), "job.out"), JoinPath(dir_.path(), "job.err"), Options());
  }
  json Once(const std::string& target) {
    ProcessResult once = Monitor({target, "--once", "--json"});
    if (once.exit_code != 0) return json();
    json view = json::parse(once.out, nullptr, false);
    return view.is_discarded() ? json() : view;
  }
  std::string script_;
  std::string job_log_dir_;
  bool metrics_port_ = false;
};

TEST_F(MonitorRealJobTest, WatchesARealJobThroughItsLogDirectory) {
  pid_t job = StartJob(60);
  ASSERT_GT(job, 0);
  json view;
  // Both workers with their pids and steps, as the agent sampled them.
  bool seen = WaitFor([&] {
    view = Once(job_log_dir_);
    if (!view.is_object() || view["nodes"].size() != 1) return false;
    const json& workers = view["nodes"][0]["workers"];
    return workers.size() == 2 && workers[0].contains("pid") && workers[0].contains("step") &&
           workers[1].contains("step");
  }, 30);
  ASSERT_TRUE(seen) << view.dump(1) << testing::Slurp(JoinPath(dir_.path(), "job.err"));
  EXPECT_EQ(view["format"], "primus-job-telemetry/1");
  EXPECT_EQ(view["job"]["world_size"], 2);
  EXPECT_EQ(view["job"]["state"], "running");
  // The plain view of the same job, and a live one that ends with the job.
  ProcessResult once = Monitor({job_log_dir_, "--once"});
  EXPECT_EQ(once.exit_code, 0) << once.all();
  EXPECT_NE(once.out.find("RUNNING"), std::string::npos) << once.out;
  EXPECT_NE(once.out.find("/60"), std::string::npos) << "step of total_steps:\n" << once.out;
  ProcessResult live = Monitor({job_log_dir_, "--interval", "0.3"});
  EXPECT_EQ(live.exit_code, 0) << live.all();
  EXPECT_NE(live.out.find("SUCCEEDED"), std::string::npos) << live.out;
  EXPECT_EQ(testing::WaitForExit(job, 30), 0) << testing::Slurp(JoinPath(dir_.path(), "job.err"));
  json last = Once(job_log_dir_);
  EXPECT_EQ(last["job"]["state"], "succeeded") << last.dump(1);
}

TEST_F(MonitorRealJobTest, WatchesARealJobThroughItsMetricsPort) {
  if (!metrics_port_) GTEST_SKIP() << "this build's agent has no metrics port";
  int port = 0;
  {
    // A free port: bind 0, read it, let it go.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port = ntohs(address.sin_port);
    ::close(fd);
  }
  pid_t job = StartJob(40, {"--metrics-port", std::to_string(port)});
  ASSERT_GT(job, 0);
  std::string target = "127.0.0.1:" + std::to_string(port);
  json view;
  bool seen = WaitFor([&] {
    view = Once(target);
    return view.is_object() && view["nodes"].size() == 1 && view["nodes"][0]["workers"].size() == 2;
  }, 30);
  ASSERT_TRUE(seen) << view.dump(1) << testing::Slurp(JoinPath(dir_.path(), "job.err"));
  EXPECT_EQ(view["job"]["world_size"], 2);
  // Live, until the job ends: its last view (succeeded) if the port served
  // it before the agent exited, else the port stopped answering.
  ProcessResult live = Monitor({target, "--interval", "0.3"});
  if (live.exit_code == 4) {
    EXPECT_NE(live.err.find("stopped answering"), std::string::npos) << live.all();
  } else {
    EXPECT_EQ(live.exit_code, 0) << live.all();
    EXPECT_NE(live.out.find("SUCCEEDED"), std::string::npos) << live.out;
  }
  EXPECT_NE(live.out.find("RUNNING"), std::string::npos) << live.out;
  EXPECT_EQ(testing::WaitForExit(job, 30), 0) << testing::Slurp(JoinPath(dir_.path(), "job.err"));
}

}  // namespace
}  // namespace primus
