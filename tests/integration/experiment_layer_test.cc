// The experiment's launch settings as a launcher configuration layer, seen
// the way a user sees them: `config show --origin --experiment FILE` and the
// `train` plan under --dry-run name the experiment file, line and column; a
// flag, --set and PRIMUS_* beat the experiment; the experiment beats
// ./.primus.yaml and the built-in defaults.
#include <gtest/gtest.h>

#include <cstdio>

#include "run_process.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

class ExperimentLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("train.py", "print('training')\n");
    // Line 4 column 19 is the experiment's nproc_per_node, line 6 column 17 its max_restarts.
    dir_.Write("exp.yaml",
               "backend: torch\n"
               "torch: {script: train.py}\n"
               "distributed:\n"
               "  nproc_per_node: 2\n"
               "fault_tolerance:\n"
               "  max_restarts: 3\n"
               "  hang_timeout: 45\n");
    dir_.Write(".primus.yaml", "direct:\n  nproc_per_node: 5\n  max_restarts: 7\n  hang_timeout: 99\n");
  }
  ProcessOptions Isolated() const {
    return IsolatedOptions(dir_.path(), {"PRIMUS_DIRECT_NPROC_PER_NODE", "PRIMUS_DIRECT_MAX_RESTARTS",
                                         "PET_MAX_RESTARTS", "PRIMUS_JOB_ID", "EXP"});
  }
  // The plan of `train pretrain --config exp.yaml`, with `direct_flags` on direct.
  ProcessResult DryRun(std::vector<std::string> direct_flags, const ProcessOptions& options) const {
    std::vector<std::string> argv = {"--dry-run", "direct"};
    argv.insert(argv.end(), direct_flags.begin(), direct_flags.end());
    for (const char* arg : {"--", "train", "pretrain", "--config", "exp.yaml", "--no-preflight"}) argv.push_back(arg);
    return RunPrimus(argv, options);
  }
  // The line of `config show --origin` output that sets direct.<key>.
  static std::string LineOf(const std::string& out, const std::string& key) {
    size_t section = out.find("\ndirect:\n");
    if (section == std::string::npos) return "";
    for (const std::string& line : Split(out.substr(section + 1), '\n')) {
      if (Trim(line).starts_with(key + ":")) return line;
    }
    return "";
  }
  TempDir dir_;
};

TEST_F(ExperimentLayerTest, ConfigShowNamesTheExperimentAsTheOrigin) {
  ProcessResult with = RunPrimus({"config", "show", "--origin", "--experiment", "exp.yaml"}, Isolated());
  ASSERT_EQ(with.exit_code, 0) << with.all();
  EXPECT_NE(LineOf(with.out, "nproc_per_node").find("2"), std::string::npos) << with.out;
  EXPECT_NE(LineOf(with.out, "nproc_per_node").find("# experiment exp.yaml:4:19"), std::string::npos) << with.out;
  EXPECT_NE(LineOf(with.out, "max_restarts").find("# experiment exp.yaml:6:17"), std::string::npos) << with.out;
  EXPECT_NE(LineOf(with.out, "hang_timeout").find("45"), std::string::npos) << with.out;
  EXPECT_NE(LineOf(with.out, "hang_timeout").find("# experiment exp.yaml:7:17"), std::string::npos) << with.out;

  // Without the experiment, ./.primus.yaml's values, as before.
  ProcessResult without = RunPrimus({"config", "show", "--origin"}, Isolated());
  ASSERT_EQ(without.exit_code, 0) << without.all();
  EXPECT_NE(LineOf(without.out, "nproc_per_node").find("5"), std::string::npos) << without.out;
  EXPECT_NE(LineOf(without.out, "nproc_per_node").find(".primus.yaml:2:19"), std::string::npos) << without.out;
}

TEST_F(ExperimentLayerTest, TheTrainPlanNamesTheExperimentAsTheOrigin) {
  ProcessResult plan = DryRun({}, Isolated());
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("world size 2 (1 x 2)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("direct.nproc_per_node 2 (experiment exp.yaml:4:19)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("direct.max_restarts 3 (experiment exp.yaml:6:17)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("hang watchdog: 45 s (experiment exp.yaml:7:17)"), std::string::npos) << plan.out;
}

TEST_F(ExperimentLayerTest, AFlagAndAPrimusVariableBeatTheExperiment) {
  ProcessResult flag = DryRun({"--nproc-per-node", "3", "--max-restarts", "1"}, Isolated());
  ASSERT_EQ(flag.exit_code, 0) << flag.all();
  EXPECT_NE(flag.out.find("world size 3 (1 x 3)"), std::string::npos) << flag.out;
  EXPECT_NE(flag.out.find("direct.nproc_per_node 3 (flag --nproc-per-node)"), std::string::npos) << flag.out;
  EXPECT_NE(flag.out.find("direct.max_restarts 1 (flag --max-restarts)"), std::string::npos) << flag.out;

  ProcessOptions options = Isolated();
  options.env["PRIMUS_DIRECT_NPROC_PER_NODE"] = "4";
  ProcessResult env = DryRun({}, options);
  ASSERT_EQ(env.exit_code, 0) << env.all();
  EXPECT_NE(env.out.find("world size 4 (1 x 4)"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("direct.nproc_per_node 4 (env PRIMUS_DIRECT_NPROC_PER_NODE)"), std::string::npos) << env.out;

  ProcessResult shown = RunPrimus({"--set", "direct.hang_timeout=12", "config", "show", "--origin", "--experiment",
                                   "exp.yaml"},
                                  options);
  ASSERT_EQ(shown.exit_code, 0) << shown.all();
  EXPECT_NE(LineOf(shown.out, "nproc_per_node").find("# env PRIMUS_DIRECT_NPROC_PER_NODE"), std::string::npos)
      << shown.out;
  EXPECT_NE(LineOf(shown.out, "hang_timeout").find("# --set"), std::string::npos) << shown.out;
}

TEST_F(ExperimentLayerTest, TheExperimentBeatsTheProjectFileAndTheDefaults) {
  // ./.primus.yaml says 5 workers: the experiment's 2 win (previous tests); an
  // experiment silent on a key leaves it to the launcher's files and defaults.
  dir_.Write("exp.yaml", "backend: torch\ntorch: {script: train.py}\ndistributed: {nnodes: 1}\n");
  ProcessResult plan = DryRun({}, Isolated());
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("direct.nproc_per_node 5 (./.primus.yaml:2:19)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("direct.nnodes 1 (experiment exp.yaml:3:23)"), std::string::npos) << plan.out;
  // A training run is not left without a hang watchdog by default: ./.primus.yaml's
  // direct.hang_timeout is for other tasks, train.hang_timeout is train's.
  EXPECT_NE(plan.out.find("hang watchdog: 1800 s (train.hang_timeout, default)"), std::string::npos) << plan.out;

  std::remove((dir_.path() + "/.primus.yaml").c_str());
  ProcessResult defaults = RunPrimus({"config", "show", "--origin", "--experiment", "exp.yaml"}, Isolated());
  ASSERT_EQ(defaults.exit_code, 0) << defaults.all();
  EXPECT_NE(LineOf(defaults.out, "nnodes").find("# experiment exp.yaml:3:23"), std::string::npos) << defaults.out;
  EXPECT_NE(LineOf(defaults.out, "nproc_per_node").find("# default"), std::string::npos) << defaults.out;
}

TEST_F(ExperimentLayerTest, ABadExperimentIsALocatedConfigurationError) {
  dir_.Write("bad.yaml", "backend: torch\ntorch: {script: train.py}\ndistributed: {nprocs_per_node: 2}\n");
  ProcessResult bad = RunPrimus({"config", "show", "--experiment", "bad.yaml"}, Isolated());
  EXPECT_EQ(bad.exit_code, 3) << bad.all();
  EXPECT_NE(bad.err.find("bad.yaml:3:"), std::string::npos) << bad.err;
  ProcessResult missing = RunPrimus({"config", "show", "--experiment"}, Isolated());
  EXPECT_EQ(missing.exit_code, 2) << missing.all();
  EXPECT_NE(missing.err.find("option --experiment needs a value (FILE)"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace primus::testing
