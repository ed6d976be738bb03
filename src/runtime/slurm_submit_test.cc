// A batch job's continuation without its bad nodes: which job may have one,
// its script, and how `sbatch --wait` finds it. Submitting it runs against
// a real cluster in tests/integration/bad_node_test.cc.
#include "runtime/slurm_submit.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/private_files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

class SlurmSubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = JobDirPlan{dir_.path() + "/output", "run"};
    ASSERT_TRUE(MakePrivateDirs(dir_.path(), "output/run_41").ok());
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/output/run_41/sbatch.sh", Script(), 0700).ok());
  }
  std::string Script() const {
    return "#!/bin/bash\n"
           "#SBATCH --job-name=run\n"
           "#SBATCH --nodes=2\n"
           "#SBATCH -x node7\n"
           "#SBATCH --nodelist=node[1-2]\n"
           "#SBATCH --dependency=afterok:12\n"
           "#SBATCH --output=" + plan_.LogPattern() + "\n"
           "# Written by primus-cli for:\n"
           "#   primus-cli slurm sbatch -N 2 -- direct -- run x\n"
           "exec /usr/bin/primus-cli slurm srun -- direct -- run x\n";
  }
  ScopedTempDir dir_{"slurm-submit"};
  JobDirPlan plan_;
};

TEST_F(SlurmSubmitTest, OnlyABatchJobThatSlurmSbatchSubmittedCanGoOn) {
  Result<BatchContinuation> first = FindBatchContinuation(plan_, {{"SLURM_JOB_ID", "41"}});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->first_job_id, "41");
  EXPECT_EQ(first->job_dir, dir_.path() + "/output/run_41");
  EXPECT_EQ(first->script_path, dir_.path() + "/output/run_41/sbatch.sh");
  EXPECT_EQ(first->log_pattern_in_dir, dir_.path() + "/output/run_41/logs/slurm-%j.out");

  // A continuation finds its own script in the first job's directory.
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/output/run_41/sbatch-57.sh", Script(), 0700).ok());
  Result<BatchContinuation> later = FindBatchContinuation(plan_, {{"SLURM_JOB_ID", "57"}, {kFirstJobVariable, "41"}});
  ASSERT_TRUE(later.ok()) << later.error().message;
  EXPECT_EQ(later->script_path, dir_.path() + "/output/run_41/sbatch-57.sh");

  Result<BatchContinuation> salloc = FindBatchContinuation(plan_, {{"SLURM_JOB_ID", "99"}});
  ASSERT_FALSE(salloc.ok());
  EXPECT_NE(salloc.error().message.find("job 99 was not submitted by primus-cli slurm sbatch"), std::string::npos)
      << salloc.error().message;
  Result<BatchContinuation> array = FindBatchContinuation(plan_, {{"SLURM_JOB_ID", "41"}, {"SLURM_ARRAY_JOB_ID", "40"}});
  ASSERT_FALSE(array.ok());
  EXPECT_NE(array.error().message.find("job array"), std::string::npos);
  EXPECT_FALSE(FindBatchContinuation(plan_, {}).ok());
  EXPECT_FALSE(FindBatchContinuation(plan_, {{"SLURM_JOB_ID", "41"}, {kFirstJobVariable, "../x"}}).ok());
}

TEST_F(SlurmSubmitTest, TheContinuationLeavesTheBadNodesOutAndKeepsItsLogInTheJobsDirectory) {
  Result<BatchContinuation> continuation = FindBatchContinuation(plan_, {{"SLURM_JOB_ID", "41"}});
  ASSERT_TRUE(continuation.ok());
  Result<std::string> script = ContinuationScript(Script(), *continuation, {"node2"}, 1);
  ASSERT_TRUE(script.ok()) << script.error().message;
  EXPECT_EQ(*script,
            "#!/bin/bash\n"
            "#SBATCH --job-name=run\n"
            "#SBATCH --nodes=2\n"
            "#SBATCH --nodelist=node1\n"
            "#SBATCH --output=" + dir_.path() + "/output/run_41/logs/slurm-%j.out\n"
            "#SBATCH --exclude=node7,node2\n"
            "#SBATCH --open-mode=append\n"
            "# Continues job 41, restart 1: node2 found bad and no spare node in its allocation "
            "(direct.exclude_bad_nodes).\n"
            "# Written by primus-cli for:\n"
            "#   primus-cli slurm sbatch -N 2 -- direct -- run x\n"
            "exec /usr/bin/primus-cli slurm srun -- direct -- run x\n");
  // A continuation of a continuation keeps what its own script left out.
  Result<std::string> again = ContinuationScript(*script, *continuation, {"node3"}, 2);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->find("#SBATCH --exclude=node7,node2,node3\n"), std::string::npos) << *again;
  EXPECT_EQ(again->find("--exclude=node7,node2\n"), std::string::npos) << *again;
}

TEST_F(SlurmSubmitTest, AUserOutputAndQuotedDirectivesAreKept) {
  Result<BatchContinuation> continuation = FindBatchContinuation(plan_, {{"SLURM_JOB_ID", "41"}});
  ASSERT_TRUE(continuation.ok());
  std::string script = "#!/bin/bash\n#SBATCH '--output=my logs/%j.out'\n#SBATCH --exclude 'node[4-5]'\n"
                       "#SBATCH -w node[1-2] \nexec true\n";
  Result<std::string> out = ContinuationScript(script, *continuation, {"node1", "node2"}, 1);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            "#!/bin/bash\n#SBATCH '--output=my logs/%j.out'\n#SBATCH --exclude=node4,node5,node1,node2\n"
            "#SBATCH --open-mode=append\n"
            "# Continues job 41, restart 1: node1, node2 found bad and no spare node in its allocation "
            "(direct.exclude_bad_nodes).\nexec true\n");
  EXPECT_FALSE(ContinuationScript("#!/bin/bash\nexec true\n", *continuation, {"node1"}, 1).ok())
      << "a script without directives is not one slurm sbatch wrote";
  Result<std::string> bad = ContinuationScript("#!/bin/bash\n#SBATCH -x node[9\nexec true\n", *continuation, {"n"}, 1);
  EXPECT_FALSE(bad.ok()) << "a malformed host list is an error, not a guess";
}

TEST_F(SlurmSubmitTest, WaitFindsTheJobThatContinuesAnother) {
  std::string dir = dir_.path() + "/output/run_41";
  EXPECT_EQ(ContinuingJob(dir, "41"), std::nullopt) << "no continuations.txt yet";
  ASSERT_TRUE(WriteFileAtomic(dir + "/continuations.txt",
                              "41 -> 57 without node2\n"
                              "garbage line\n"
                              "57 -> ../etc without node3\n"
                              "57 -> 63 without node3\n").ok());
  EXPECT_EQ(ContinuingJob(dir, "41"), "57");
  EXPECT_EQ(ContinuingJob(dir, "57"), "63") << "a line whose new id is not a job id is skipped";
  EXPECT_EQ(ContinuingJob(dir, "63"), std::nullopt);
}

}  // namespace
}  // namespace primus::runtime
