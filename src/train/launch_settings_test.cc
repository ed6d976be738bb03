#include "train/launch_settings.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::train {
namespace {

class LaunchSettingsTest : public ::testing::Test {
 protected:
  // An experiment setting all four launch keys, and a project file setting the same keys.
  void SetUp() override {
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/train.py", "print('hi')\n").ok());
    experiment_file_ = dir_.path() + "/exp.yaml";
    ASSERT_TRUE(WriteFileAtomic(experiment_file_, "backend: torch\ntorch: {script: " + dir_.path() +
                                                      "/train.py}\n"
                                                      "distributed:\n  nproc_per_node: 2\n  nnodes: 1\n"
                                                      "fault_tolerance:\n  max_restarts: 4\n  hang_timeout: 30\n")
                    .ok());
    sources_.project_file = dir_.path() + "/.primus.yaml";
    ASSERT_TRUE(WriteFileAtomic(sources_.project_file,
                                "direct:\n  nproc_per_node: 5\n  max_restarts: 7\n  hang_timeout: 99\n")
                    .ok());
  }

  ExperimentConfig Experiment(std::vector<std::string> overrides = {}) {
    ExperimentRequest request{experiment_file_, std::move(overrides), Environment({{"HOME", "/root"}})};
    auto experiment = LoadExperiment(request);
    EXPECT_TRUE(experiment.ok()) << experiment.error().Format();
    return experiment.ok() ? *experiment : ExperimentConfig{};
  }

  config::LauncherConfig Launcher(const ExperimentConfig& experiment) {
    auto launcher = config::LoadLauncherConfig(sources_);
    EXPECT_TRUE(launcher.ok()) << launcher.error().Format();
    if (!launcher.ok()) return config::LauncherConfig(config::Value(), {});
    auto extended = WithExperimentLaunchSettings(*launcher, experiment);
    EXPECT_TRUE(extended.ok()) << extended.error().Format();
    return extended.ok() ? *extended : *launcher;
  }

  ScopedTempDir dir_;
  std::string experiment_file_;
  config::LauncherSources sources_;
};

TEST_F(LaunchSettingsTest, TheExperimentBeatsFilesAndDefaultsWithItsOwnLocation) {
  config::LauncherConfig launcher = Launcher(Experiment());
  EXPECT_EQ(launcher.GetString("direct.nproc_per_node"), "2");
  EXPECT_EQ(launcher.OriginOf("direct.nproc_per_node").Describe(), "experiment " + experiment_file_ + ":4:19");
  EXPECT_EQ(launcher.GetInt("direct.max_restarts"), 4);
  EXPECT_EQ(launcher.OriginOf("direct.max_restarts").Describe(), "experiment " + experiment_file_ + ":7:17");
  EXPECT_DOUBLE_EQ(launcher.GetDouble("direct.hang_timeout"), 30);
  // nnodes: 1 written in the experiment is the experiment's too (the default is also 1).
  EXPECT_EQ(launcher.OriginOf("direct.nnodes").Describe(), "experiment " + experiment_file_ + ":5:11");
}

TEST_F(LaunchSettingsTest, FlagsEnvironmentAndSetBeatTheExperiment) {
  sources_.environment = Environment({{"PRIMUS_DIRECT_NPROC_PER_NODE", "6"}, {"PET_MAX_RESTARTS", "2"}});
  sources_.set_assignments = {"direct.nnodes=3"};
  sources_.flags = {{"direct.hang_timeout", {"12"}, "--hang-timeout"}};
  config::LauncherConfig launcher = Launcher(Experiment());
  EXPECT_EQ(launcher.GetString("direct.nproc_per_node"), "6");
  EXPECT_EQ(launcher.OriginOf("direct.nproc_per_node").Describe(), "env PRIMUS_DIRECT_NPROC_PER_NODE");
  EXPECT_EQ(launcher.GetInt("direct.max_restarts"), 2);
  EXPECT_EQ(launcher.GetInt("direct.nnodes"), 3);
  EXPECT_DOUBLE_EQ(launcher.GetDouble("direct.hang_timeout"), 12);
  EXPECT_EQ(launcher.OriginOf("direct.hang_timeout").Describe(), "flag --hang-timeout");
}

TEST_F(LaunchSettingsTest, TheSchedulerBeatsTheExperiment) {
  sources_.environment = Environment({{"SLURM_JOB_ID", "7"},
                                              {"SLURM_STEP_ID", "0"},
                                              {"SLURM_NNODES", "4"},
                                              {"SLURM_NODEID", "1"},
                                              {"SLURM_PROCID", "1"},
                                              {"SLURM_STEP_NODELIST", "n[1-4]"},
                                              {"SLURM_JOB_NODELIST", "n[1-4]"}});
  config::LauncherConfig launcher = Launcher(Experiment());
  ASSERT_EQ(launcher.scheduler().scheduler, "slurm");
  EXPECT_EQ(launcher.GetInt("direct.nnodes"), 4);
  EXPECT_TRUE(launcher.OriginOf("direct.nnodes").from_scheduler);
  EXPECT_EQ(launcher.GetString("direct.nproc_per_node"), "2") << "what the scheduler does not set stays the experiment's";
}

TEST_F(LaunchSettingsTest, WithoutAHangTimeoutTrainHangTimeoutIsTheWatchdog) {
  ASSERT_TRUE(WriteFileAtomic(experiment_file_, "backend: torch\ntorch: {script: " + dir_.path() + "/train.py}\n").ok());
  config::LauncherConfig launcher = Launcher(Experiment());
  EXPECT_DOUBLE_EQ(launcher.GetDouble("direct.hang_timeout"), 1800);
  EXPECT_EQ(launcher.OriginOf("direct.hang_timeout").Describe(), "train.hang_timeout, default");
  // What the experiment leaves out stays the launcher's.
  EXPECT_EQ(launcher.GetString("direct.nproc_per_node"), "5");
  EXPECT_EQ(launcher.OriginOf("direct.nproc_per_node").Describe(), sources_.project_file + ":2:19");
  EXPECT_EQ(launcher.OriginOf("direct.nnodes").Describe(), "default");
}

TEST_F(LaunchSettingsTest, ATrainArgumentOverrideIsTheExperimentsToo) {
  config::LauncherConfig launcher = Launcher(Experiment({"distributed.nproc_per_node=3"}));
  EXPECT_EQ(launcher.GetString("direct.nproc_per_node"), "3");
  EXPECT_EQ(launcher.OriginOf("direct.nproc_per_node").Describe(), "experiment flag distributed.nproc_per_node=3");
}

}  // namespace
}  // namespace primus::train
