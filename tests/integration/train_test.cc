// `train` end to end with real PyTorch workers (Debian's torch 1.13, gloo):
// the README's main job, restarts that continue from a checkpoint, a crash in
// the middle of writing one, root causes, replay, hooks, and the promise that
// no secret reaches any file we write. Slow: seconds per test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "processes.h"
#include "run_process.h"
#include "start_process.h"
#include "text.h"
#include "wait_for.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

class TrainTest : public ::testing::Test {
 protected:
  // From the repository, as the README runs it; experiments go to a temp workspace.
  ProcessResult Train(std::vector<std::string> extra, ProcessOptions options = {}) {
    // The hang watchdog turns a stuck worker into a fast, explained failure.
    std::vector<std::string> args = {"direct", "--hang-timeout", "30", "--", "train", "pretrain", "--config",
                                     "examples/gpt/configs/tiny-cpu.yaml", "workspace=" + workspace_.path()};
    args.insert(args.end(), extra.begin(), extra.end());
    if (options.cwd.empty()) options.cwd = PRIMUS_SOURCE_DIR;
    options.env["NO_COLOR"] = "1";
    options.timeout_s = 240;
    return RunPrimus(args, options);
  }
  // The experiment directories in the workspace, oldest first.
  std::vector<fs::path> Experiments() const {
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(workspace_.path())) dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
  }
  static nlohmann::json Json(const fs::path& path) { return nlohmann::json::parse(Slurp(path)); }
  static std::vector<nlohmann::json> Metrics(const fs::path& dir) {
    std::vector<nlohmann::json> lines;
    for (const std::string& line : Split(Slurp(dir / "metrics.jsonl"), '\n')) {
      if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
    }
    return lines;
  }
  TempDir workspace_;
};

TEST_F(TrainTest, TinyCpuTrainsAndLeavesACompleteSnapshotWithoutSecrets) {
  ProcessOptions options;
  options.env["HF_TOKEN"] = "hf_test_secret_value_42";
  options.env["PIP_INDEX_URL"] = "https://alice:pw-secret-99@example.com/simple";
  std::vector<std::string> args = {"direct", "--env", "MY_API_KEY=key-secret-777", "--", "train", "pretrain", "--config",
                                   "examples/gpt/configs/tiny-cpu.yaml", "workspace=" + workspace_.path(),
                                   "training.steps=80", "checkpoint.interval=40"};
  options.cwd = PRIMUS_SOURCE_DIR;
  options.timeout_s = 240;
  ::umask(022);  // the usual umask: a file the trainer created itself would be world-readable
  ProcessResult result = RunPrimus(args, options);
  ASSERT_EQ(result.exit_code, 0) << result.all();

  ASSERT_EQ(Experiments().size(), 1u);
  fs::path dir = Experiments()[0];
  EXPECT_TRUE(dir.filename().string().starts_with("tiny-cpu_")) << dir;
  auto metrics = Metrics(dir);
  ASSERT_GE(metrics.size(), 2u);
  double first = metrics.front()["loss"], last = metrics.back()["loss"];
  EXPECT_LE(last, 0.7 * first) << "the loss falls by at least 30%: " << first << " -> " << last;
  EXPECT_EQ(metrics.back()["step"], 80);

  for (const char* file : {"config/tiny-cpu.yaml", "config/resolved.yaml", "env/primus_env_dump.txt", "env/env.json",
                           "env/system_info.json", "metadata.json", "checkpoints/step_80.pt"}) {
    EXPECT_TRUE(fs::exists(dir / file)) << file;
  }
  nlohmann::json metadata = Json(dir / "metadata.json");
  EXPECT_EQ(metadata["status"], "succeeded");
  EXPECT_EQ(metadata["exit_code"], 0);
  EXPECT_EQ(metadata["argv"][1], "direct") << "the command line as typed";
  EXPECT_FALSE(metadata["end_time"].is_null());
  EXPECT_TRUE(metadata["git"].is_object()) << "the repository's commit and dirty flag";
  nlohmann::json system = Json(dir / "env/system_info.json");
  EXPECT_TRUE(system.contains("torch")) << system.dump();
  EXPECT_EQ(system["gpu_count"], 0);
  std::string resolved = Slurp(dir / "config/resolved.yaml");
  EXPECT_NE(resolved.find("steps: 80"), std::string::npos) << "overrides are in the resolved config";
  nlohmann::json env = Json(dir / "env/env.json");
  EXPECT_EQ(env["MY_API_KEY"]["value"], "<redacted>");
  EXPECT_EQ(env["MY_API_KEY"]["origin"], "flag --env") << "the same origin info and --dry-run show";
  bool rank_logs = false;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "logs")) {
    if (entry.path().filename().string().find("rank1") != std::string::npos) rank_logs = true;
  }
  EXPECT_TRUE(rank_logs) << "per-rank logs under logs/";

  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    struct stat info {};
    ASSERT_EQ(::lstat(entry.path().c_str(), &info), 0) << entry.path();
    EXPECT_EQ(info.st_mode & 0077, 0u) << "the user's alone (the trainer's metrics and checkpoints too): "
                                       << entry.path();
    if (!entry.is_regular_file()) continue;
    std::string content = Slurp(entry.path());
    for (const char* secret : {"hf_test_secret_value_42", "pw-secret-99", "key-secret-777"}) {
      EXPECT_EQ(content.find(secret), std::string::npos) << secret << " appears in " << entry.path();
    }
  }
}

// The shipped example at any worker count: one worker on its own.
TEST_F(TrainTest, TinyCpuTrainsWithDirectSingle) {
  ProcessOptions options;
  options.cwd = PRIMUS_SOURCE_DIR;
  options.timeout_s = 240;
  ProcessResult result = RunPrimus({"direct", "--single", "--", "train", "pretrain", "--config",
                                    "examples/gpt/configs/tiny-cpu.yaml", "workspace=" + workspace_.path(),
                                    "training.steps=20", "checkpoint.interval=0"},
                                   options);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  ASSERT_EQ(Experiments().size(), 1u);
  auto metrics = Metrics(Experiments().front());
  ASSERT_FALSE(metrics.empty()) << result.all();
  EXPECT_EQ(metrics.back()["step"], 20);
  EXPECT_EQ(metrics.back()["world_size"], 1) << metrics.back().dump();
}

// init's CPU template (no GPU here) trains as written, from another directory.
TEST_F(TrainTest, AnInitTemplateTrainsOnTheCpu) {
  ProcessOptions options;
  options.cwd = workspace_.path();
  options.timeout_s = 240;
  // The template runs `python3`: Debian's, which has torch, first on the PATH.
  options.env["PATH"] = "/usr/bin:/bin:" + std::string(getenv("PATH") ? getenv("PATH") : "");
  ProcessResult init = RunPrimus({"init", "gpt2-124m", "--gpus", "0", "-o", "gpt2.yaml"}, options);
  ASSERT_EQ(init.exit_code, 0) << init.all();
  ProcessResult result = RunPrimus({"direct", "--", "train", "pretrain", "--config", "gpt2.yaml", "training.steps=10",
                                    "checkpoint.interval=0"},
                                   options);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::vector<fs::path> runs;
  for (const auto& entry : fs::directory_iterator(workspace_.path() + "/output")) runs.push_back(entry.path());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs.front().filename().string().starts_with("gpt2-124m-torch_")) << runs.front();
  auto metrics = Metrics(runs.front());
  ASSERT_FALSE(metrics.empty()) << result.all();
  EXPECT_EQ(metrics.back()["step"], 10);
  EXPECT_EQ(metrics.back()["world_size"], 2);
  // analyze without a path reads the job just run from here.
  ProcessResult analyzed = RunPrimus({"analyze", "run"}, options);
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.all();
  EXPECT_NE(analyzed.out.find("run " + runs.front().string() + "\n"), std::string::npos) << analyzed.out;
  EXPECT_NE(analyzed.out.find("status:     succeeded"), std::string::npos) << analyzed.out;
  EXPECT_EQ(RunPrimus({"analyze", "logs"}, options).exit_code, 0);
}

TEST_F(TrainTest, AKilledWorkerRestartsAndContinuesFromTheCheckpoint) {
  ProcessResult result = Train({"training.steps=40", "checkpoint.interval=10", "fault_tolerance.max_restarts=1",
                                "--fail-at-step", "25", "--fail-rank", "1"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  fs::path dir = Experiments().at(0);
  EXPECT_EQ(Json(dir / "metadata.json")["restarts"], 1);
  long first_step_after_restart = 0;
  for (const auto& line : Metrics(dir)) {
    if (line.value("restart_count", 0) == 1 && first_step_after_restart == 0) first_step_after_restart = line["step"];
  }
  EXPECT_EQ(first_step_after_restart, 21) << "the second attempt resumes from step_20.pt, not from 0";
  EXPECT_NE(result.out.find("resumed from"), std::string::npos) << result.out;
}

TEST_F(TrainTest, ACrashWhileWritingACheckpointResumesFromThePreviousGoodOne) {
  ProcessResult result = Train({"training.steps=30", "checkpoint.interval=10", "fault_tolerance.max_restarts=1",
                                "--crash-during-checkpoint", "torn", "--crash-checkpoint-step", "20"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  fs::path dir = Experiments().at(0);
  long first_step_after_restart = 0;
  for (const auto& line : Metrics(dir)) {
    if (line.value("restart_count", 0) == 1 && first_step_after_restart == 0) first_step_after_restart = line["step"];
  }
  EXPECT_EQ(first_step_after_restart, 11) << "the torn step_20.pt is skipped; step_10.pt is the newest valid one";
  EXPECT_NE(result.all().find("step_20.pt"), std::string::npos) << "the bad checkpoint is named";
}

TEST_F(TrainTest, AFailureWithoutRestartsIsReportedWithItsRootCause) {
  ProcessResult result = Train({"training.steps=20", "--fail-at-step", "3", "--fail-rank", "1"});
  EXPECT_EQ(result.exit_code, 1) << result.all();
  fs::path dir = Experiments().at(0);
  nlohmann::json metadata = Json(dir / "metadata.json");
  EXPECT_EQ(metadata["status"], "failed");
  EXPECT_EQ(metadata["exit_code"], 1);
  EXPECT_EQ(metadata["root_cause"]["rank"], 1) << metadata.dump(2);
}

TEST_F(TrainTest, ReplayRerunsTheRecordedRunAndRefusesDifferentHardware) {
  ProcessResult first = Train({"training.steps=10"});
  ASSERT_EQ(first.exit_code, 0) << first.all();
  fs::path original = Experiments().at(0);

  ProcessOptions fixture;
  fixture.cwd = PRIMUS_SOURCE_DIR;
  fixture.env["PRIMUS_SYSFS_ROOT"] = std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/mi300x-8/sys";
  fixture.env["PRIMUS_PROCFS_ROOT"] = std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/mi300x-8/proc";
  fixture.timeout_s = 120;
  ProcessResult refused = RunPrimus({"direct", "--", "train", "pretrain", "--replay", original.string()}, fixture);
  EXPECT_EQ(refused.exit_code, 4) << refused.all();
  EXPECT_NE(refused.err.find("INCOMPATIBLE"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("MI300X"), std::string::npos);

  ProcessOptions same;
  same.cwd = PRIMUS_SOURCE_DIR;
  same.timeout_s = 120;
  ProcessResult replayed = RunPrimus({"direct", "--", "train", "pretrain", "--replay", original.string()}, same);
  ASSERT_EQ(replayed.exit_code, 0) << replayed.all();
  fs::path replay_dir = Experiments().back();
  ASSERT_NE(replay_dir, original);
  EXPECT_EQ(Json(replay_dir / "metadata.json")["replay_of"], original.string());
  EXPECT_EQ(Slurp(replay_dir / "config/resolved.yaml"), Slurp(original / "config/resolved.yaml"));
}

class TrainHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("exp.yaml",
               "exp_name: hooks\nworkspace: out\nbackend: command\n"
               "command: {argv: [sh, -c, 'echo \"HOOK=$HOOK_VAR ARGS=$*\"', worker]}\n"
               "distributed: {nproc_per_node: 1}\n");
    dir_.Write(".primus/hooks/global/00_first.sh", "#!/bin/sh\necho first >> order.txt\n");
    dir_.Write(".primus/hooks/train/pretrain/01_env.sh",
               "#!/bin/sh\necho second >> order.txt\necho env.HOOK_VAR=from-hook\necho extra.flag=x\n");
  }
  ProcessResult Run(std::vector<std::string> args) {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["NO_COLOR"] = "1";
    return RunPrimus(args, options);
  }
  TempDir dir_;
};

TEST_F(TrainHooksTest, HooksRunInOrderAndTheirLinesReachTheWorkers) {
  ProcessResult result = Run({"direct", "--", "train", "pretrain", "--config", "exp.yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("HOOK=from-hook ARGS=--flag x"), std::string::npos) << result.out;
  EXPECT_EQ(Slurp(dir_.path() + "/order.txt"), "first\nsecond\n");
}

TEST_F(TrainHooksTest, AFailingHookStopsTheLaunchAndIsRecorded) {
  dir_.Write(".primus/hooks/train/pretrain/02_fail.sh", "#!/bin/sh\necho 'dataset not found' >&2\nexit 7\n");
  ProcessResult result = Run({"direct", "--", "train", "pretrain", "--config", "exp.yaml"});
  EXPECT_EQ(result.exit_code, 1) << result.all();
  EXPECT_NE(result.err.find("02_fail.sh failed with exit code 7"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("dataset not found"), std::string::npos);
  EXPECT_EQ(result.out.find("HOOK="), std::string::npos) << "no worker started";
  fs::path experiment = fs::directory_iterator(dir_.path() + "/out")->path();
  nlohmann::json metadata = nlohmann::json::parse(Slurp(experiment / "metadata.json"));
  EXPECT_EQ(metadata["status"], "failed");
  EXPECT_NE(metadata["root_cause"]["launcher_error"].get<std::string>().find("02_fail.sh"), std::string::npos);
}

// Ctrl-C while a hook runs: the hook's whole process group ends at once (not
// at its 300 s limit), no worker starts, exit 130, and the experiment's
// metadata says "interrupted" and names the hook.
TEST_F(TrainHooksTest, CtrlCDuringAHookEndsItAndTheLaunch) {
  dir_.Write(".primus/hooks/train/pretrain/02_slow.sh", "#!/bin/sh\nsleep 120 &\necho $! > sleeper.pid\nwait\n");
  ProcessOptions options;
  options.cwd = dir_.path();
  options.env["NO_COLOR"] = "1";
  std::string out = dir_.path() + "/primus.out", err = dir_.path() + "/primus.err";
  pid_t pid = StartProcess({PRIMUS_BINARY, "direct", "--", "train", "pretrain", "--config", "exp.yaml"}, out, err,
                           options);
  ASSERT_GT(pid, 0);
  std::string sleeper_file = dir_.path() + "/sleeper.pid";
  WaitFor([&] { return !Trim(ReadOrEmpty(sleeper_file)).empty(); }, 30);
  std::string sleeper_text(Trim(ReadOrEmpty(sleeper_file)));
  ASSERT_FALSE(sleeper_text.empty()) << ReadOrEmpty(err);
  pid_t sleeper = static_cast<pid_t>(std::stol(sleeper_text));
  auto start = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  EXPECT_EQ(WaitForExit(pid, 30), 130) << ReadOrEmpty(err);
  double seconds = SecondsSince(start);
  EXPECT_LT(seconds, 10);
  EXPECT_NE(ReadOrEmpty(err).find("hook .primus/hooks/train/pretrain/02_slow.sh: stopped by SIGINT; no worker was started"),
            std::string::npos)
      << ReadOrEmpty(err);
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(sleeper); }, 5)) << "the hook's background sleep outlived the launch";
  EXPECT_EQ(ReadOrEmpty(out).find("HOOK="), std::string::npos) << "no worker started";
  fs::path experiment = fs::directory_iterator(dir_.path() + "/out")->path();
  nlohmann::json metadata = nlohmann::json::parse(Slurp(experiment / "metadata.json"));
  EXPECT_EQ(metadata["status"], "interrupted");
  EXPECT_EQ(metadata["exit_code"], 130);
  EXPECT_NE(metadata["root_cause"]["launcher_error"].get<std::string>().find("02_slow.sh"), std::string::npos);
  fprintf(stderr, "Ctrl-C during a hook to the launcher's exit: %.2f s\n", seconds);
}

TEST_F(TrainHooksTest, ALayoutThatCannotWorkStopsBeforeAnythingStarts) {
  dir_.Write("bad.yaml", "backend: command\ncommand: {argv: [/bin/true]}\nworkspace: out\nparallelism:\n  tensor: 4\n");
  ProcessResult result = Run({"direct", "--nproc-per-node", "2", "--", "train", "pretrain", "--config", "bad.yaml"});
  EXPECT_EQ(result.exit_code, 3) << result.all();
  EXPECT_NE(result.err.find("bad.yaml:5:11"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir_.path() + "/out")) << "nothing is created for a launch that cannot work";
  EXPECT_FALSE(fs::exists(dir_.path() + "/order.txt")) << "no hook ran";
}

}  // namespace
}  // namespace primus::testing
