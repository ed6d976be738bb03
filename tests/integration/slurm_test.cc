// `primus-cli slurm srun|sbatch` on a real Slurm cluster started by the test
// (tests/support/slurm_cluster.h: slurmctld + 2 slurmd, each node in a
// network namespace with its own address, /etc/hosts and host name): 2-node
// gloo DDP jobs through srun and sbatch --wait, a failing rank on node 2
// ending the job with its own exit code and the banner, scancel and Ctrl-C
// leaving no process behind, `direct` refusing a multi-node batch script,
// --dry-run, and the missing-Slurm error. Seconds each: label slow.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <thread>

#include "processes.h"
#include "run_process.h"
#include "slurm_cluster.h"
#include "start_process.h"
#include "util/files.h"
#include "text.h"
#include "util/strings.h"
#include "wait_for.h"

namespace primus {
namespace {

using testing::WaitFor;
using testing::ProcessesWithMarker;
using testing::ReadOrEmpty;
using testing::SecondsSince;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::SlurmCluster;
using Clock = std::chrono::steady_clock;

const std::string kPython = "/usr/bin/python3";
const std::string kSource = PRIMUS_SOURCE_DIR;

// Live slurmstepd processes of job `id` (their command line reads
// "slurmstepd: [<id>.<step>]"): the nodes are still tearing its steps down.
std::vector<pid_t> StepDaemonsOf(const std::string& id) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    auto pid = ParseInt(entry->d_name);
    if (!pid) continue;
    auto cmdline = ReadFile(std::string("/proc/") + entry->d_name + "/cmdline");
    if (cmdline.ok() && cmdline->starts_with("slurmstepd") && cmdline->find("[" + id + ".") != std::string::npos) {
      found.push_back(static_cast<pid_t>(*pid));
    }
  }
  closedir(proc);
  return found;
}

std::string JobIdFrom(const std::string& output) {
  std::smatch match;
  return std::regex_search(output, match, std::regex("submitted batch job ([0-9]+)")) ? match[1].str() : "";
}

class SlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    unavailable_ = SlurmCluster::Unavailable();
    if (!unavailable_.empty()) return;
    auto started = Clock::now();
    cluster_ = SlurmCluster::Start({}, &start_error_).release();
    start_seconds_ = SecondsSince(started);
  }
  static void TearDownTestSuite() {
    auto started = Clock::now();
    delete cluster_;
    cluster_ = nullptr;
    std::cerr << "[slurm cluster: started in " << start_seconds_ << " s, stopped in " << SecondsSince(started)
              << " s]\n";
  }
  void SetUp() override {
    if (!unavailable_.empty()) GTEST_SKIP() << "no local Slurm cluster: " << unavailable_;
    ASSERT_NE(cluster_, nullptr) << "the Slurm cluster did not start: " << start_error_;
    marker_ = "slurm-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter_);
  }
  void TearDown() override {
    // A failed test must not leave its job's processes behind.
    for (pid_t pid : ProcessesWithMarker(marker_)) kill(pid, SIGKILL);
  }

  // The environment of a user on this cluster, in a scratch directory.
  ProcessOptions UserOptions(double timeout_s = 90) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env = cluster_->Environment();
    options.env["HOME"] = dir_.path();
    options.env["PRIMUS_TEST_MARKER"] = marker_;
    options.env["PRIMUS_DIRECT_LOG_DIR"] = dir_.path() + "/agent-logs";  // not /tmp/primus-<uid>
    options.timeout_s = timeout_s;
    return options;
  }
  ProcessResult Primus(const std::vector<std::string>& args, double timeout_s = 90) const {
    return testing::RunPrimus(args, UserOptions(timeout_s));
  }
  // How many jobs the controller knows (finished ones stay for MinJobAge).
  size_t KnownJobs() const {
    std::string shown = cluster_->Client({"scontrol", "show", "jobs"}).out;
    size_t count = 0;
    for (size_t at = shown.find("JobId="); at != std::string::npos; at = shown.find("JobId=", at + 1)) ++count;
    return count;
  }
  bool JobGone(const std::string& id) const { return Trim(cluster_->Client({"squeue", "-h", "-j", id}).out).empty(); }

  static inline SlurmCluster* cluster_ = nullptr;
  static inline std::string unavailable_;
  static inline std::string start_error_;
  static inline double start_seconds_ = 0;
  static inline int counter_ = 0;
  testing::TempDir dir_;
  std::string marker_;
};

TEST_F(SlurmTest, ClusterNodesAreHostsOfTheirOwn) {
  ProcessResult names = cluster_->Client({"srun", "-N", "2", "--ntasks-per-node=1", "--label", "sh", "-c",
                                          "echo $(hostname) $(getent hosts node1 | cut -d' ' -f1)"});
  ASSERT_EQ(names.exit_code, 0) << names.all();
  EXPECT_NE(names.out.find("0: node1 10."), std::string::npos) << names.out;
  EXPECT_NE(names.out.find("1: node2 10."), std::string::npos) << names.out;
}

TEST_F(SlurmTest, SrunRunsATwoNodeDdpJob) {
  auto started = Clock::now();
  ProcessResult result = Primus({"slurm", "srun", "-N", "2", "--", "direct", "--", "run", kPython,
                                 kSource + "/examples/ddp-smoke/train.py", "--steps", "100"});
  double seconds = SecondsSince(started);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("[node1:0] done: 2 workers, 100 steps"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("replicas in sync: True"), std::string::npos) << result.out;
  // Each node's agent found node 0 in the step's node list, by name.
  EXPECT_NE(result.err.find("[node2] [INFO] starting 1 worker (rank 1 of world size 2)"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("master node1:"), std::string::npos) << result.err;
  std::cerr << "[srun 2-node DDP (100 steps): " << seconds << " s]\n";
}

// preflight in a Slurm step: each node finds node 0 and MASTER_PORT from the
// step (no flags), node 0 judges both and writes the node lists; a bad
// GLOO_SOCKET_IFNAME on node2 only (set in its own environment by a wrapper)
// puts node2 in failing_nodes.txt.
TEST_F(SlurmTest, PreflightJudgesEveryNodeOfAStep) {
  std::string report = dir_.path() + "/report";
  ProcessResult good = Primus({"slurm", "srun", "-N", "2", "--", "preflight", "--host", "--network", "--report", report});
  ASSERT_TRUE(good.exit_code == 0 || good.exit_code == 1) << good.all();
  EXPECT_NE(good.out.find("preflight of 2 node(s)"), std::string::npos) << good.all();
  auto text = [](const std::string& path) {
    auto content = ReadFile(path);
    return content.ok() ? *content : std::string("(missing)");
  };
  std::string passing = text(report + "/passing_nodes.txt"), failing = text(report + "/failing_nodes.txt");
  std::string both = passing + failing;
  EXPECT_TRUE(both.find("node1\n") != std::string::npos && both.find("node2\n") != std::string::npos &&
              both.size() == 12)
      << "passing: " << passing << "failing: " << failing;
  EXPECT_EQ(good.exit_code == 0, failing.empty()) << good.all();

  std::string wrapper = dir_.path() + "/bad-ifname-on-node2.sh";
  ASSERT_TRUE(WriteFileAtomic(wrapper, "#!/bin/sh\n[ \"$(hostname)\" = node2 ] && export GLOO_SOCKET_IFNAME=ib9\nexec \"$@\"\n",
                              0755).ok());
  ProcessOptions options = UserOptions();
  ProcessResult bad = testing::RunProcess(
      {"srun", "-N", "2", "--ntasks-per-node=1", wrapper, PRIMUS_BINARY, "direct", "--", "preflight", "--host",
       "--network", "--report", report},
      options);
  EXPECT_EQ(bad.exit_code, 1) << bad.all();
  EXPECT_EQ(text(report + "/failing_nodes.txt"), "node2\n") << bad.all();
  EXPECT_EQ(text(report + "/passing_nodes.txt"), "node1\n") << bad.all();
}

// The blog's production line writes its log under logs/, which need not
// exist: sbatch would start the job and Slurm end it at once (exit status 181,
// nothing said). The directory is made first, and --wait follows that file.
TEST_F(SlurmTest, SbatchWithOutputInAMissingDirectoryRunsAndWaitFollowsIt) {
  ProcessResult result = Primus({"slurm", "sbatch", "-N", "1", "-o", "logs/train_%j.log", "--wait", "--", "direct",
                                 "--", "run", "sh", "-c", "echo written by the job"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::string id = JobIdFrom(result.out);
  ASSERT_FALSE(id.empty()) << result.out;
  EXPECT_NE(result.err.find("made " + dir_.path() + "/logs for Slurm's log file"), std::string::npos) << result.err;
  struct stat info {};
  ASSERT_EQ(::stat((dir_.path() + "/logs").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u) << "ours, not world-readable";
  Result<std::string> log = ReadFile(dir_.path() + "/logs/train_" + id + ".log");
  ASSERT_TRUE(log.ok()) << "the user's log file of job " << id;
  EXPECT_NE(log->find("written by the job"), std::string::npos) << *log;
  EXPECT_NE(result.out.find("log:    " + dir_.path() + "/logs/train_" + id + ".log"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("written by the job"), std::string::npos) << "--wait shows the job's output:\n" << result.out;
  EXPECT_TRUE(JobGone(id));
}

// %N and a padded %j in the user's --output: the file is named on the node
// that runs the batch script, and --wait follows it once the job runs there.
TEST_F(SlurmTest, WaitFollowsAnOutputNamedAfterTheBatchHost) {
  ProcessResult result = Primus({"slurm", "sbatch", "-N", "1", "-o", "logs/%N-%8j.log", "--wait", "--", "direct", "--",
                                 "run", "sh", "-c", "sleep 1; echo named after its host"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::string id = JobIdFrom(result.out);
  ASSERT_FALSE(id.empty()) << result.out;
  std::string padded = std::string(8 - std::min<size_t>(8, id.size()), '0') + id;
  EXPECT_NE(result.err.find("runs its script on "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("-" + padded + ".log"), std::string::npos) << result.err;
  EXPECT_NE(result.out.find("named after its host"), std::string::npos) << "--wait shows the job's output:\n" << result.out;
}

TEST_F(SlurmTest, SbatchWaitRunsATwoNodeDdpJob) {
  auto started = Clock::now();
  ProcessResult result = Primus({"slurm", "sbatch", "-N", "2", "--wait", "--", "direct", "--", "run", kPython,
                                 kSource + "/tests/workers/ddp_step.py"});
  double seconds = SecondsSince(started);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::string id = JobIdFrom(result.out);
  ASSERT_FALSE(id.empty()) << result.out;

  // The job's files sit in its experiment directory, ./output/run_<job id>/.
  std::vector<std::string> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path() + "/output")) dirs.push_back(entry.path());
  ASSERT_EQ(dirs, std::vector<std::string>{dir_.path() + "/output/run_" + id});
  Result<std::string> script = ReadFile(dirs[0] + "/sbatch.sh");
  ASSERT_TRUE(script.ok());
  EXPECT_NE(script->find("#SBATCH --nodes=2\n"), std::string::npos) << *script;
  EXPECT_NE(script->find("slurm srun -- direct -- run"), std::string::npos) << *script;
  EXPECT_EQ(script->find("PRIMUS_JOB_TOKEN="), std::string::npos) << "the token never goes into a file";
  Result<std::string> log = ReadFile(dirs[0] + "/logs/slurm-" + id + ".out");
  ASSERT_TRUE(log.ok()) << "log of job " << id;
  EXPECT_NE(log->find("ddp step ok: rank 0 of 2"), std::string::npos) << *log;
  EXPECT_NE(log->find("ddp step ok: rank 1 of 2"), std::string::npos) << *log;
  // The master port is derived from the job id, the same on both nodes.
  int port = 20000 + 2 * static_cast<int>(*ParseInt(id) % 5000);
  EXPECT_NE(log->find("[node2] [INFO] starting 1 worker (rank 1 of world size 2): " + kPython), std::string::npos);
  EXPECT_NE(log->find("master node1:" + std::to_string(port)), std::string::npos) << *log;
  // --wait copied the log to stdout while it followed the job.
  EXPECT_NE(result.out.find("ddp step ok: rank 1 of 2"), std::string::npos) << result.out;
  EXPECT_TRUE(JobGone(id));
  std::cerr << "[sbatch --wait 2-node DDP step: " << seconds << " s]\n";
}

TEST_F(SlurmTest, SbatchTrainSharesTheJobsExperimentDirectory) {
  // A command-backend experiment: train's whole path (experiment directory,
  // snapshots, agent) without a model. Both nodes join <workspace>/<exp>_<job id>/,
  // where sbatch left the script and Slurm the log.
  std::string experiment = dir_.Write("exp.yaml", "exp_name: tiny-job\nworkspace: runs\nbackend: command\n"
                                                  "command: {argv: [/bin/true]}\n");
  ProcessResult result = Primus({"slurm", "sbatch", "-N", "2", "--wait", "--", "train", "pretrain", "--config",
                                 experiment});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::string id = JobIdFrom(result.out);
  ASSERT_FALSE(id.empty()) << result.out;
  std::string job_dir = dir_.path() + "/runs/tiny-job_" + id;
  EXPECT_NE(result.out.find("script: " + job_dir + "/sbatch.sh"), std::string::npos) << result.out;
  for (const std::string& file : std::vector<std::string>{"/sbatch.sh", "/logs/slurm-" + id + ".out", "/metadata.json",
                                                           "/nodes/node1/metadata.json"}) {
    EXPECT_TRUE(PathExists(job_dir + file)) << job_dir + file;
  }
  std::vector<std::string> workspace;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path() + "/runs")) workspace.push_back(entry.path());
  EXPECT_EQ(workspace, std::vector<std::string>{job_dir}) << "one directory for the whole job";

  // One node: the same single directory, the snapshot at its root.
  ProcessResult one = Primus({"slurm", "sbatch", "-N", "1", "--wait", "--", "train", "pretrain", "--config", experiment});
  ASSERT_EQ(one.exit_code, 0) << one.all();
  std::string one_id = JobIdFrom(one.out);
  std::string one_dir = dir_.path() + "/runs/tiny-job_" + one_id;
  EXPECT_TRUE(PathExists(one_dir + "/sbatch.sh"));
  EXPECT_TRUE(PathExists(one_dir + "/metadata.json"));
  workspace.clear();
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path() + "/runs")) workspace.push_back(entry.path());
  std::sort(workspace.begin(), workspace.end());
  std::vector<std::string> expected = {job_dir, one_dir};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(workspace, expected) << "a single-node job also keeps one directory";
}

// Rank 1 (node 2) fails after half a second; rank 0 would sleep a minute.
const std::vector<std::string> kFailingOnNode2 = {
    "run", "sh", "-c", "if [ \"$GROUP_RANK\" = 1 ]; then sleep 0.5; echo rank 1 gives up >&2; exit 7; fi; exec sleep 60"};

TEST_F(SlurmTest, FailingRankOnNode2EndsTheSrunJobWithItsCode) {
  std::vector<std::string> args = {"slurm", "srun", "-N", "2", "--", "direct", "--"};
  args.insert(args.end(), kFailingOnNode2.begin(), kFailingOnNode2.end());
  auto started = Clock::now();
  ProcessResult result = Primus(args);
  double seconds = SecondsSince(started);
  EXPECT_EQ(result.exit_code, 7) << result.all();
  EXPECT_LT(seconds, 15) << "node 1's worker must not be waited for";
  EXPECT_NE(result.err.find("Root cause: rank 1 (local rank 0) on node2"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("failed with exit code 7"), std::string::npos) << result.err;
  EXPECT_TRUE(WaitFor([&] { return ProcessesWithMarker(marker_).empty(); }, 5));
  std::cerr << "[srun failing rank: " << seconds << " s]\n";
}

TEST_F(SlurmTest, FailingRankOnNode2EndsTheBatchJobWithItsCode) {
  std::vector<std::string> args = {"slurm", "sbatch", "-N", "2", "--wait", "--", "direct", "--"};
  args.insert(args.end(), kFailingOnNode2.begin(), kFailingOnNode2.end());
  ProcessResult result = Primus(args);
  EXPECT_EQ(result.exit_code, 7) << result.all();
  EXPECT_NE(result.out.find("Root cause: rank 1 (local rank 0) on node2"), std::string::npos) << result.out;
  std::string id = JobIdFrom(result.out);
  ASSERT_FALSE(id.empty());
  EXPECT_NE(cluster_->Client({"scontrol", "show", "job", id}).out.find("ExitCode=7:0"), std::string::npos)
      << "Slurm records the root cause too";
}

TEST_F(SlurmTest, ScancelLeavesNoProcessBehind) {
  ProcessResult submitted = Primus({"slurm", "sbatch", "-N", "2", "--", "direct", "--", "run", "sleep", "60"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.all();
  std::string id = JobIdFrom(submitted.out);
  ASSERT_FALSE(id.empty()) << submitted.out;
  ASSERT_TRUE(WaitFor([&] { return ProcessesWithMarker(marker_, "sleep").size() == 2; }, 20))
      << "one sleeping worker per node";
  size_t running = ProcessesWithMarker(marker_).size();
  auto cancelled = Clock::now();
  ProcessResult cancel = cluster_->Client({"scancel", id});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.all();
  EXPECT_TRUE(WaitFor([&] { return ProcessesWithMarker(marker_).empty(); }, 15))
      << ProcessesWithMarker(marker_).size() << " of " << running << " processes of job " << id << " survived scancel";
  double seconds = SecondsSince(cancelled);
  EXPECT_TRUE(WaitFor([&] { return JobGone(id); }, 10));
  std::cerr << "[scancel: " << running << " processes gone in " << seconds << " s]\n";
}

TEST_F(SlurmTest, CtrlCWhileWaitingCancelsTheJob) {
  ProcessOptions options = UserOptions();
  pid_t pid = testing::StartProcess(
      {PRIMUS_BINARY, "slurm", "sbatch", "-N", "2", "--wait", "--", "direct", "--", "run", "sleep", "60"},
      dir_.path() + "/out.txt", dir_.path() + "/err.txt", options);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor([&] { return ProcessesWithMarker(marker_, "sleep").size() == 2; }, 20));
  auto interrupted = Clock::now();
  kill(pid, SIGINT);
  int status = testing::WaitForExit(pid, 30);
  double seconds = SecondsSince(interrupted);
  std::string out = ReadOrEmpty(dir_.path() + "/out.txt");
  std::string err = ReadOrEmpty(dir_.path() + "/err.txt");
  EXPECT_EQ(status, 128 + SIGINT) << out << err;
  EXPECT_NE(err.find("cancelling job"), std::string::npos) << err;
  EXPECT_TRUE(WaitFor([&] { return ProcessesWithMarker(marker_).empty(); }, 10));
  std::string id = JobIdFrom(out);
  ASSERT_FALSE(id.empty()) << out;
  EXPECT_TRUE(JobGone(id));
  EXPECT_NE(cluster_->Client({"scontrol", "show", "job", id}).out.find("JobState=CANCELLED"), std::string::npos);
  std::cerr << "[Ctrl-C to job gone: " << seconds << " s]\n";
}

TEST_F(SlurmTest, WaitingAsksTheControllerOnlyEveryPollInterval) {
  // squeue through a wrapper that counts its calls. Each call's child ends
  // with a SIGCHLD, which must not cut the quarter-second wait short (it
  // once did: squeue ran back to back for the whole job).
  std::string wrappers = dir_.path() + "/wrappers";
  std::filesystem::create_directories(wrappers);
  std::string count = dir_.path() + "/squeue-calls";
  {
    std::ofstream script(wrappers + "/squeue");
    script << "#!/bin/sh\necho call >> " << count << "\nexec /usr/bin/squeue \"$@\"\n";
  }
  std::filesystem::permissions(wrappers + "/squeue", std::filesystem::perms::owner_all);
  ProcessOptions options = UserOptions();
  const char* path = std::getenv("PATH");
  std::optional<std::string> cluster_path = options.env.count("PATH") ? options.env["PATH"] : std::nullopt;
  options.env["PATH"] = wrappers + ":" + (cluster_path ? *cluster_path : std::string(path ? path : "/usr/bin:/bin"));
  auto started = Clock::now();
  ProcessResult result =
      testing::RunPrimus({"slurm", "sbatch", "-N", "1", "--wait", "--", "direct", "--", "run", "sleep", "3"}, options);
  double seconds = SecondsSince(started);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  size_t calls = Split(ReadOrEmpty(count), '\n').size() - 1;
  EXPECT_GE(calls, 2u) << "squeue was asked while the job ran";
  // At most one call per 0.25 s of waiting, and a few more for the end.
  EXPECT_LE(static_cast<double>(calls), seconds / 0.25 + 6) << calls << " squeue calls in " << seconds << " s";
}

TEST_F(SlurmTest, RequeuedJobRunsAgainWithItsRestartCount) {
  // The first run waits to be requeued; the second (SLURM_RESTART_COUNT=1) ends.
  // On a loaded machine Slurm 22.05 itself can lose the requeue: the first
  // run's batch script exits (1, its srun step was cancelled) after the job
  // is PENDING again, and slurmctld then ends the requeued job as FAILED
  // (Reason=NonZeroExitCode, Restarts=1, a RunTime of 0 to 2 s: the first
  // run's) without a second run. That race is Slurm's, not ours, so the
  // scenario runs again (at most 4 times) when exactly that happened, and the
  // test reports itself skipped, with scontrol's record, when every attempt
  // ended so; every other outcome is judged at once.
  for (int attempt = 1;; ++attempt) {
    std::string out_path = dir_.path() + "/out" + std::to_string(attempt) + ".txt";
    std::string err_path = dir_.path() + "/err" + std::to_string(attempt) + ".txt";
    pid_t pid = testing::StartProcess(
        {PRIMUS_BINARY, "slurm", "sbatch", "-N", "2", "--requeue", "--wait", "--", "direct", "--", "run", "sh", "-c",
         "echo \"run with restart count ${SLURM_RESTART_COUNT:-0}\"; [ \"${SLURM_RESTART_COUNT:-0}\" -ge 1 ] || exec sleep 60"},
        out_path, err_path, UserOptions());
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(WaitFor([&] { return ProcessesWithMarker(marker_, "sleep").size() == 2; }, 20));
    std::string id = JobIdFrom(ReadOrEmpty(out_path));
    ASSERT_FALSE(id.empty());
    // A requeue within a second of the start loses the race below far more
    // often: let the first run settle, as a real job's would have.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    auto requeued = Clock::now();
    ProcessResult requeue = cluster_->Client({"scontrol", "requeue", id});
    ASSERT_EQ(requeue.exit_code, 0) << requeue.all();
    // Slurm holds a requeued job back for two minutes (Reason=BeginTime); let
    // it start once the first run's step is gone from both nodes (only our
    // --wait remains): an earlier start can fail while slurmd tears it down.
    WaitFor([&] {
      return cluster_->Client({"squeue", "-h", "-j", id, "-o", "%T"}).out.find("PENDING") != std::string::npos;
    }, 10);
    EXPECT_TRUE(WaitFor([&] {
      return ProcessesWithMarker(marker_, "sleep").empty() && ProcessesWithMarker(marker_, "primus-cli").size() <= 1 &&
             StepDaemonsOf(id).empty();
    }, 30));
    cluster_->Client({"scontrol", "update", "JobId=" + id, "StartTime=now"});
    int status = testing::WaitForExit(pid, 60);
    double seconds = SecondsSince(requeued);
    std::string out = ReadOrEmpty(out_path);
    std::string job = cluster_->Client({"scontrol", "show", "job", id}).out;
    bool slurm_lost_the_requeue = status == 1 && job.find("JobState=FAILED") != std::string::npos &&
                                  job.find("Restarts=1") != std::string::npos &&
                                  (job.find("RunTime=00:00:00") != std::string::npos ||
                                   job.find("RunTime=00:00:01") != std::string::npos ||
                                   job.find("RunTime=00:00:02") != std::string::npos) &&
                                  out.find("run with restart count 1") == std::string::npos;
    if (slurm_lost_the_requeue && attempt < 4) {
      std::cerr << "[attempt " << attempt << ": Slurm ended the requeued job as FAILED before a second run; again]\n";
      continue;
    }
    if (slurm_lost_the_requeue) {
      // Some local clusters restart the requeued job at once, while its nodes
      // still tear the first run down, every time: Slurm's outcome, reported.
      GTEST_SKIP() << "Slurm ended the requeued job as FAILED before a second run, 4 times:\n" << job;
    }
    std::string job_log;
    if (size_t at = out.find("log:    "); at != std::string::npos) job_log = out.substr(at + 8, out.find('\n', at) - at - 8);
    EXPECT_EQ(status, 0) << out << ReadOrEmpty(err_path) << "\n==== the job's log\n" << ReadOrEmpty(job_log)
                         << "\n==== scontrol\n" << job;
    EXPECT_NE(out.find("run with restart count 0"), std::string::npos) << out;
    EXPECT_NE(out.find("run with restart count 1"), std::string::npos) << "--wait follows the job through its requeue\n" << out;
    std::cerr << "[requeue to the end of the second run: " << seconds << " s]\n";
    return;
  }
}

TEST_F(SlurmTest, DirectRefusesAMultiNodeBatchScript) {
  // The public Primus way: the batch script runs the launcher itself, which
  // would start node 0 only.
  std::string script = dir_.Write("job.sh", "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -o " + dir_.path() + "/job.out\n" +
                                                std::string(PRIMUS_BINARY) + " direct -- run true\n");
  ProcessOptions options = UserOptions();
  ProcessResult submitted = testing::RunProcess({"sbatch", "--parsable", script}, options);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.all();
  std::string id(Trim(submitted.out));
  ASSERT_TRUE(WaitFor([&] { return JobGone(id); }, 20));
  EXPECT_NE(cluster_->Client({"scontrol", "show", "job", id}).out.find("ExitCode=4:0"), std::string::npos);
  std::string log = ReadOrEmpty(dir_.path() + "/job.out");
  EXPECT_NE(log.find("not a job step: direct here would start the workers of this one node only"), std::string::npos)
      << log;
  EXPECT_NE(log.find("primus-cli slurm srun"), std::string::npos) << log;
}

TEST_F(SlurmTest, SeveralTasksPerNodeAreRefused) {
  ProcessResult result = testing::RunProcess(
      {"srun", "-N", "2", "-n", "4", PRIMUS_BINARY, "direct", "--", "run", "true"}, UserOptions());
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.all().find("runs 4 tasks on 2 node(s)"), std::string::npos) << result.all();
  EXPECT_NE(result.all().find("--ntasks-per-node=1"), std::string::npos) << result.all();
}

TEST_F(SlurmTest, DryRunPrintsAndRunsNothing) {
  size_t jobs_before = KnownJobs();
  ProcessResult srun = Primus({"--dry-run", "slurm", "srun", "-N", "2", "-p", "debug", "--exclusive", "--", "direct",
                               "--nproc-per-node", "2", "--", "run", "echo", "a b"});
  ASSERT_EQ(srun.exit_code, 0) << srun.all();
  EXPECT_NE(srun.out.find("srun --ntasks-per-node=1 --kill-on-bad-exit=1 --nodes=2 --partition=debug --exclusive " +
                          std::string(PRIMUS_BINARY) + " direct --nproc-per-node 2 -- run echo 'a b'"),
            std::string::npos)
      << srun.out;

  ProcessResult sbatch = Primus({"--dry-run", "slurm", "sbatch", "-N", "2", "--requeue", "--mem", "1G", "--", "run",
                                 "echo", "hi"});
  ASSERT_EQ(sbatch.exit_code, 0) << sbatch.all();
  for (const char* line : {"#!/bin/bash\n", "#SBATCH --job-name=run\n", "#SBATCH --nodes=2\n", "#SBATCH --requeue\n",
                           "#SBATCH --open-mode=append\n", "#SBATCH --mem 1G\n", "slurm srun -- direct -- run echo hi\n"}) {
    EXPECT_NE(sbatch.out.find(line), std::string::npos) << line << " in\n" << sbatch.out;
  }
  EXPECT_FALSE(PathExists(dir_.path() + "/output")) << "no experiment directory under --dry-run";
  EXPECT_EQ(KnownJobs(), jobs_before) << "no job was submitted";
}

// Slurm's node range: passed to srun and sbatch as written, and the agents
// use the allocation Slurm grants (whatever count in the range it is).
TEST_F(SlurmTest, ANodeRangeRunsOnTheNodesSlurmGrants) {
  ProcessResult dry = Primus({"--dry-run", "slurm", "sbatch", "--nodes=2-4", "--", "run", "true"});
  ASSERT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("#SBATCH --nodes=2-4\n"), std::string::npos) << dry.out;
  ProcessResult reversed = Primus({"--dry-run", "slurm", "srun", "-N", "4-2", "--", "run", "true"});
  EXPECT_EQ(reversed.exit_code, 3) << reversed.all();
  EXPECT_NE(reversed.err.find("flag -N: slurm.nodes '4-2'"), std::string::npos) << reversed.err;

  ProcessResult result = Primus({"slurm", "srun", "-N", "1-2", "--", "direct", "--", "run", "sh", "-c",
                                 "echo node $GROUP_RANK of $GROUP_WORLD_SIZE world $WORLD_SIZE"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  int granted = result.out.find(" of 2 world 2") != std::string::npos ? 2 : 1;
  for (int node = 0; node < granted; ++node) {
    std::string line = "node " + std::to_string(node) + " of " + std::to_string(granted) + " world " +
                       std::to_string(granted);
    EXPECT_NE(result.out.find(line), std::string::npos) << line << "\n" << result.out;
  }
}

// No Slurm client on this host: no cluster needed.
TEST(SlurmWithoutClusterTest, MissingSrunAndSbatchAreUnavailable) {
  testing::TempDir dir;
  ProcessOptions options;
  options.cwd = dir.path();
  options.env["HOME"] = dir.path();
  options.env["PATH"] = dir.path();  // nothing in it
  for (const char* action : {"srun", "sbatch"}) {
    ProcessResult result = testing::RunPrimus({"slurm", action, "-N", "2", "--", "run", "true"}, options);
    EXPECT_EQ(result.exit_code, 4) << result.all();
    EXPECT_NE(result.err.find(std::string(action) + " not found on PATH"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("hint: run on a Slurm login node"), std::string::npos) << result.err;
  }
  EXPECT_FALSE(PathExists(dir.path() + "/output")) << "nothing is created when sbatch is missing";
}

}  // namespace
}  // namespace primus
