// Where a batch job's files go, with real experiment files.
#include "runtime/slurm_job_dir.h"

#include <gtest/gtest.h>

#include "snapshot/experiment_dir.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

Invocation TaskLaunch(std::string task, std::vector<std::string> args) {
  Invocation invocation;
  invocation.chain = {ModeInvocation{"slurm", "sbatch", {}, {}, {}}};
  invocation.task = std::move(task);
  invocation.task_args = std::move(args);
  return invocation;
}

class SlurmJobDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/exp.yaml",
                                "exp_name: gpt-small\nworkspace: runs\nbackend: command\n"
                                "command: {argv: [/bin/true]}\n").ok());
  }
  ScopedTempDir dir_{"slurm-jobdir"};
};

TEST_F(SlurmJobDirTest, OtherTasksGoToOutputUnderTheirName) {
  Result<JobDirPlan> plan = PlanJobDir(TaskLaunch("run", {"python3", "x.py"}), {}, "/work/here");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->workspace, "/work/here/output");
  EXPECT_EQ(plan->name, "run");
}

TEST_F(SlurmJobDirTest, TrainUsesTheExperimentsWorkspaceAndName) {
  std::string exp = dir_.path() + "/exp.yaml";
  Result<JobDirPlan> plan = PlanJobDir(TaskLaunch("train", {"pretrain", "--config", exp}), {}, dir_.path());
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_EQ(plan->workspace, dir_.path() + "/runs");
  EXPECT_EQ(plan->name, "gpt-small");

  Result<JobDirPlan> overridden =
      PlanJobDir(TaskLaunch("train", {"pretrain", "--config=" + exp, "workspace=/scratch/w", "exp_name=try2"}), {}, "/");
  ASSERT_TRUE(overridden.ok()) << overridden.error().Format();
  EXPECT_EQ(overridden->workspace, "/scratch/w");
  EXPECT_EQ(overridden->name, "try2");

  Result<JobDirPlan> from_exp = PlanJobDir(TaskLaunch("train", {"pretrain"}), Environment({{"EXP", exp}}), "/x");
  ASSERT_TRUE(from_exp.ok()) << from_exp.error().Format();
  EXPECT_EQ(from_exp->name, "gpt-small");
  EXPECT_EQ(from_exp->workspace, "/x/runs");
}

TEST_F(SlurmJobDirTest, NamesAreSafeAndTheLogPatternNamesTheSameDirectory) {
  Result<JobDirPlan> plan = PlanJobDir(TaskLaunch("train", {"pretrain", "--config", dir_.path() + "/exp.yaml",
                                                            "exp_name=gpt-small.v2", "workspace=" + dir_.path() + "/100%"}),
                                       {}, "/");
  ASSERT_TRUE(plan.ok()) << plan.error().Format();
  EXPECT_EQ(plan->name, "gpt-small.v2");
  EXPECT_EQ(plan->DirFor("42"), dir_.path() + "/100%/gpt-small.v2_42");
  EXPECT_EQ(plan->LogPattern(), dir_.path() + "/100%%/gpt-small.v2_%j/logs/slurm-%j.out") << "% is Slurm's escape";
  // An exp_name that is no safe directory name is refused where the experiment is read.
  EXPECT_FALSE(PlanJobDir(TaskLaunch("train", {"pretrain", "--config", dir_.path() + "/exp.yaml", "exp_name=gpt small/v2"}),
                          {}, "/")
                   .ok());
}

TEST_F(SlurmJobDirTest, WritesTheScriptWhereTrainsNodesWillLook) {
  JobDirPlan plan{dir_.path() + "/output", "run"};
  Result<std::string> script = WriteJobFiles(plan, "42", "#!/bin/bash\nexec true\n");
  ASSERT_TRUE(script.ok()) << script.error().Format();
  EXPECT_EQ(*script, dir_.path() + "/output/run_42/sbatch.sh");
  EXPECT_TRUE(IsExecutableFile(*script));
  EXPECT_TRUE(IsDirectory(dir_.path() + "/output/run_42/logs")) << "Slurm opens the log there; it creates no directory";
  // train's nodes join the same directory (node 0's snapshot is its root).
  Result<snapshot::JobExperimentDir> joined = snapshot::OpenJobExperimentDir(plan.workspace, "run", "42", 0);
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ(joined->shared_root, dir_.path() + "/output/run_42");
}

TEST_F(SlurmJobDirTest, ABadExperimentIsRefusedAtSubmission) {
  Result<JobDirPlan> missing = PlanJobDir(TaskLaunch("train", {"pretrain", "--config", dir_.path() + "/none.yaml"}), {}, "/");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("none.yaml"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace primus::runtime
