// Replay reproduces the run, and a stopped run goes on where it stopped, with
// real PyTorch workers (the example trainer is deterministic: the same run
// gives the same losses). The project is a git repository made per test from
// examples/gpt, so that its code can change between a run and its replay.
// Slow: seconds per training run.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "start_process.h"
#include "text.h"
#include "wait_for.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ReplayResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindExecutable("git").empty()) GTEST_SKIP() << "git is not installed (scripts/setup.sh installs it)";
    project_ = fs::path(dir_.path()) / "project";
    fs::create_directories(project_ / "examples");
    fs::copy(fs::path(PRIMUS_SOURCE_DIR) / "examples/gpt", project_ / "examples/gpt",
             fs::copy_options::recursive | fs::copy_options::skip_symlinks);
    fs::remove_all(project_ / "examples/gpt/__pycache__");
    Git({"init", "-q"});
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "the project"});
  }
  void Git(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-c", "user.email=t@example.com", "-c", "user.name=t"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options;
    options.cwd = project_.string();
    ProcessResult result = RunProcess(argv, options);
    ASSERT_EQ(result.exit_code, 0) << result.all();
  }
  ProcessOptions In(const fs::path& cwd) const {
    ProcessOptions options;
    options.cwd = cwd.string();
    options.env["NO_COLOR"] = "1";
    options.timeout_s = 240;
    return options;
  }
  ProcessResult Train(const std::vector<std::string>& extra, std::vector<std::string> mode = {}) {
    std::vector<std::string> args = {"direct", "--hang-timeout", "60"};
    args.insert(args.end(), mode.begin(), mode.end());
    args.insert(args.end(), {"--", "train", "pretrain", "--config", "examples/gpt/configs/tiny-cpu.yaml"});
    args.insert(args.end(), extra.begin(), extra.end());
    return RunPrimus(args, In(project_));
  }
  ProcessResult Replay(const fs::path& experiment, std::vector<std::string> mode = {}) {
    std::vector<std::string> args = {"direct"};
    args.insert(args.end(), mode.begin(), mode.end());
    args.insert(args.end(), {"--", "train", "pretrain", "--replay", experiment.string()});
    return RunPrimus(args, In(dir_.path()));  // not the project's directory
  }
  std::vector<fs::path> Experiments() const {
    std::vector<fs::path> dirs;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(project_ / "output", error)) dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
  }
  static std::vector<double> Losses(const fs::path& experiment) {
    std::vector<double> losses;
    for (const std::string& line : Split(Slurp((experiment / "metrics.jsonl").string()), '\n')) {
      if (!Trim(line).empty()) losses.push_back(json::parse(line)["loss"].get<double>());
    }
    return losses;
  }
  static json Metadata(const fs::path& experiment) { return json::parse(Slurp((experiment / "metadata.json").string())); }
  TempDir dir_;
  fs::path project_;
};

TEST_F(ReplayResumeTest, AReplayFromAnotherDirectoryRunsTheRecordedArgumentsAndRefusesOtherCodeOrLayout) {
  // Uncommitted code, and a backend argument after the experiment.
  std::string model = Slurp((project_ / "examples/gpt/model.py").string());
  ASSERT_TRUE(WriteFileAtomic((project_ / "examples/gpt/model.py").string(), model + "\n# a local change\n").ok());
  // A hook (not in git) whose argument decides the losses.
  std::string hook = (project_ / ".primus/hooks/train/pretrain/01_seed.sh").string();
  fs::create_directories(fs::path(hook).parent_path());
  ASSERT_TRUE(WriteFileAtomic(hook, "echo extra.seed=1234\necho env.HOOK_VERSION=1\n").ok());
  // And a patch, given on the command line only.
  std::string patch = (project_ / "fix.sh").string();
  ASSERT_TRUE(WriteFileAtomic(patch, "echo applied >> " + dir_.path() + "/patch-runs\necho env.PATCH_APPLIED=1\n").ok());
  ProcessResult first = Train({"training.steps=12", "--dropout", "0.1"}, {"--patch", "fix.sh"});
  ASSERT_EQ(first.exit_code, 0) << first.all();
  ASSERT_EQ(Experiments().size(), 1u);
  fs::path original = Experiments()[0];
  json recorded = Metadata(original);
  EXPECT_EQ(recorded["launch"]["backend_args"], json({"--dropout", "0.1"}));
  EXPECT_EQ(recorded["launch"]["layout"]["world_size"], 2);
  EXPECT_TRUE(recorded["git"]["dirty"].get<bool>());
  EXPECT_NE(Slurp((original / "code/uncommitted.patch").string()).find("+# a local change"), std::string::npos);
  ASSERT_EQ(recorded["launch"]["scripts"].size(), 2u) << recorded["launch"].dump(1);
  EXPECT_EQ(recorded["launch"]["scripts"][0]["kind"], "patch");
  const json& script = recorded["launch"]["scripts"].at(1);
  EXPECT_EQ(script["path"], ".primus/hooks/train/pretrain/01_seed.sh");
  EXPECT_EQ(script["extra_args"], json({"--seed", "1234"}));
  EXPECT_EQ(script["env"]["HOOK_VERSION"], "1");
  EXPECT_EQ(Slurp((original / script["copy"].get<std::string>()).string()), Slurp(hook));

  // The hook changes after the run: the replay runs the recorded copy, and says so.
  ASSERT_TRUE(WriteFileAtomic(hook, "echo extra.seed=99\necho env.HOOK_VERSION=2\n").ok());
  ProcessResult replayed = Replay(original);
  ASSERT_EQ(replayed.exit_code, 0) << replayed.all();
  EXPECT_EQ(Slurp(dir_.path() + "/patch-runs"), "applied\napplied\n") << "the recorded patch ran again, unasked";
  EXPECT_NE(replayed.err.find("replay: the recorded backend arguments: --dropout 0.1"), std::string::npos) << replayed.err;
  EXPECT_NE(replayed.err.find("no differences: same code, layout"), std::string::npos) << replayed.err;
  EXPECT_NE(replayed.err.find("hook .primus/hooks/train/pretrain/01_seed.sh changed since the recorded run; its "
                              "recorded copy runs"),
            std::string::npos)
      << replayed.err;
  ASSERT_EQ(Experiments().size(), 2u);
  fs::path again = Experiments()[1];
  // The same command for the workers (but for the run's own directory), the same losses.
  std::string then = Join(recorded["launch"]["worker_argv"].get<std::vector<std::string>>(), " ");
  std::string now = Join(Metadata(again)["launch"]["worker_argv"].get<std::vector<std::string>>(), " ");
  EXPECT_EQ(ReplaceAll(then, original.filename().string(), "RUN"), ReplaceAll(now, again.filename().string(), "RUN"));
  EXPECT_EQ(Losses(again), Losses(original));
  EXPECT_EQ(Losses(original).size(), 12u);

  // The code moves on: the replay refuses, says what differs and how to get it back.
  Git({"commit", "-q", "-am", "the change, committed"});
  ProcessResult refused = Replay(original);
  EXPECT_EQ(refused.exit_code, 4) << refused.all();
  EXPECT_NE(refused.err.find("code: commit"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("git apply " + original.string() + "/code/uncommitted.patch"), std::string::npos)
      << refused.err;
  // Another layout refuses too, before any batch arithmetic.
  ProcessResult one_worker = Replay(original, {"--nproc-per-node", "1"});
  EXPECT_EQ(one_worker.exit_code, 4) << one_worker.all();
  EXPECT_NE(one_worker.err.find("it ran on 1 node(s) x 2 worker(s) (world size 2), this launch has 1 x 1"),
            std::string::npos)
      << one_worker.err;
}

TEST_F(ReplayResumeTest, ARunStoppedWithCtrlCGoesOnFromItsCheckpointWhenRunAgain) {
  std::vector<std::string> args = {PRIMUS_BINARY, "direct", "--", "train", "pretrain", "--config",
                                   "examples/gpt/configs/tiny-cpu.yaml", "training.steps=40", "checkpoint.interval=10",
                                   "--slow-rank", "1", "--slow-ms", "150"};
  std::string out = dir_.path() + "/first.out", err = dir_.path() + "/first.err";
  pid_t pid = StartProcess(args, out, err, In(project_));
  ASSERT_GT(pid, 0);
  // Stopped after its step-20 checkpoint, before its step-30 one.
  bool past = WaitFor([&] {
    std::vector<fs::path> runs = Experiments();
    if (runs.empty()) return false;
    return fs::exists(runs[0] / "checkpoints/step_20.pt") && Losses(runs[0]).size() >= 22;
  }, 120);
  ::kill(pid, SIGINT);
  EXPECT_EQ(WaitForExit(pid, 60), 130) << ReadOrEmpty(err);
  ASSERT_TRUE(past) << ReadOrEmpty(err);
  fs::path stopped = Experiments().at(0);
  ASSERT_FALSE(fs::exists(stopped / "checkpoints/step_40.pt")) << "the run finished before it was stopped";
  EXPECT_EQ(Metadata(stopped)["status"], "interrupted");
  EXPECT_NE(ReadOrEmpty(err).find("to go on from its newest checkpoint (output/" + stopped.filename().string() +
                                  "/checkpoints): primus-cli direct -- train pretrain --config"),
            std::string::npos)
      << ReadOrEmpty(err);

  // The same command again: it starts from the stopped run's newest checkpoint.
  std::vector<std::string> again(args.begin() + 1, args.end());
  again.back() = "10";  // --slow-ms: faster now; the rest as before
  ProcessResult resumed = RunPrimus(again, In(project_));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.all();
  EXPECT_NE(resumed.err.find("resume auto: unless this run has checkpoints of its own"), std::string::npos) << resumed.err;
  int64_t newest = fs::exists(stopped / "checkpoints/step_30.pt") ? 30 : 20;
  EXPECT_NE(resumed.all().find("resumed from output/" + stopped.filename().string() + "/checkpoints/step_" +
                               std::to_string(newest) + ".pt at step " + std::to_string(newest)),
            std::string::npos)
      << resumed.all();
  fs::path second = Experiments().at(1);
  std::vector<double> losses = Losses(second);
  EXPECT_EQ(losses.size(), static_cast<size_t>(40 - newest)) << "only the steps after the checkpoint";
  EXPECT_TRUE(fs::exists(stopped / ("checkpoints/step_" + std::to_string(newest) + ".pt"))) << "read, not moved";
}

}  // namespace
}  // namespace primus::testing
