// The one launch path (src/tasks/worker_launch.h) seen from the command
// line: every task that runs workers under the node agent (run, train, and
// Primus's own subcommands) ends by one rule. A failed job exits with the
// failing worker's own code, or with direct.failure_exit_code when that is
// set (torchrun's 1). `train` and `primus` used to ignore the setting.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_process.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

class WorkerExitCodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A Primus installation around the fixture for primus/cli/main.py
    // (tests/fixtures/primus/main.py: PRIMUS_FIXTURE_EXIT sets its exit code).
    install_ = dir_.path() + "/Primus";
    fs::create_directories(install_ + "/primus/cli/subcommands");
    fs::create_directories(install_ + "/primus/configs");
    fs::copy_file(std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/primus/main.py", install_ + "/primus/cli/main.py");
    std::ofstream(install_ + "/primus/cli/subcommands/projection.py");
    std::ofstream(install_ + "/primus/__init__.py") << "__version__ = \"26.5\"\n";
    dir_.Write("exp.yaml", "exp_name: fails\n"
                           "workspace: " + dir_.path() + "/ws\n"
                           "backend: command\n"
                           "distributed: {nproc_per_node: 2}\n"
                           "command: {argv: [/bin/sh, -c, 'if [ \"$RANK\" = 1 ]; then exit 5; fi; sleep 30']}\n");
  }

  // `primus-cli [--set direct.failure_exit_code=N] direct -- <task...>`
  ProcessResult Launch(const std::vector<std::string>& task, int failure_exit_code) const {
    std::vector<std::string> args;
    if (failure_exit_code >= 0) {
      args = {"--set", "direct.failure_exit_code=" + std::to_string(failure_exit_code)};
    }
    args.push_back("direct");
    args.push_back("--");
    args.insert(args.end(), task.begin(), task.end());
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["PRIMUS_PATH"] = install_;
    options.env["PRIMUS_FIXTURE_EXIT"] = "5";
    options.env["PRIMUS_DIRECT_FAILURE_EXIT_CODE"] = std::nullopt;
    options.timeout_s = 120;
    return RunPrimus(args, options);
  }

  nlohmann::json NewestMetadata() const {
    fs::path newest;
    for (const auto& entry : fs::directory_iterator(dir_.path() + "/ws")) {
      if (newest.empty() || entry.path().filename() > newest.filename()) newest = entry.path();
    }
    return nlohmann::json::parse(Slurp((newest / "metadata.json").string()));
  }

  TempDir dir_;
  std::string install_;
};

const std::vector<std::string> kRun = {"run", "/bin/sh", "-c", "exit 5"};
const std::vector<std::string> kTrain = {"train", "pretrain", "--no-preflight", "--config", "exp.yaml"};
const std::vector<std::string> kPrimus = {"projection", "performance"};

TEST_F(WorkerExitCodeTest, AFailedJobExitsWithTheWorkersOwnCodeInEveryTask) {
  for (const auto& task : {kRun, kTrain, kPrimus}) {
    ProcessResult result = Launch(task, -1);
    EXPECT_EQ(result.exit_code, 5) << task.front() << ":\n" << result.all();
  }
  nlohmann::json metadata = NewestMetadata();
  EXPECT_EQ(metadata["status"], "failed");
  EXPECT_EQ(metadata["exit_code"], 5);
  EXPECT_EQ(metadata["root_cause"]["rank"], 1);
}

TEST_F(WorkerExitCodeTest, FailureExitCodeIsTheExitCodeOfEveryTask) {
  for (const auto& task : {kRun, kTrain, kPrimus}) {
    ProcessResult result = Launch(task, 1);
    EXPECT_EQ(result.exit_code, 1) << task.front() << " with direct.failure_exit_code=1:\n" << result.all();
  }
  // train's record: the launcher's exit code, and the worker's own in the root cause.
  nlohmann::json metadata = NewestMetadata();
  EXPECT_EQ(metadata["status"], "failed");
  EXPECT_EQ(metadata["exit_code"], 1);
  EXPECT_EQ(metadata["root_cause"]["exit_code"], 5);
  // A job that succeeds exits 0 whatever the setting.
  ProcessResult ok = Launch({"run", "/bin/true"}, 1);
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
}

}  // namespace
}  // namespace primus::testing
