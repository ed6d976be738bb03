// Reading how a job ended from `scontrol show job` (recorded from Slurm
// 22.05 on a real cluster: testdata/scontrol_show_job_*.txt) and from sacct.
// FollowJob itself runs against a real cluster in tests/integration/slurm_test.cc.
#include "runtime/slurm_job_watch.h"

#include <gtest/gtest.h>

#include "util/files.h"

namespace primus::runtime {
namespace {

JobEnd Recorded(const std::string& name) {
  Result<std::string> text = ReadFile(std::string(PRIMUS_SOURCE_DIR) + "/src/runtime/testdata/scontrol_show_job_" + name + ".txt");
  EXPECT_TRUE(text.ok()) << name;
  if (!text.ok()) return {};
  Result<JobEnd> end = ParseScontrolJob(*text);
  EXPECT_TRUE(end.ok()) << name;
  return end.ok() ? *end : JobEnd{};
}

TEST(SlurmJobWatchTest, ReadsScontrolsJobStateAndExitCode) {
  JobEnd failed = Recorded("failed");  // the batch script exited 7
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exit_code, 7);
  EXPECT_EQ(JobExitStatus(failed), 7);

  JobEnd cancelled = Recorded("cancelled");  // scancel while running
  EXPECT_EQ(cancelled.state, "CANCELLED");
  EXPECT_EQ(cancelled.signal, 15);
  EXPECT_EQ(JobExitStatus(cancelled), 143);

  JobEnd signalled = Recorded("signalled");  // the script killed itself with SIGSEGV
  EXPECT_EQ(JobExitStatus(signalled), 139);

  JobEnd completed = Recorded("completed");
  EXPECT_EQ(completed.state, "COMPLETED");
  EXPECT_EQ(JobExitStatus(completed), 0);
}

TEST(SlurmJobWatchTest, AJobThatDidNotCompleteIsNeverASuccess) {
  EXPECT_EQ(JobExitStatus({"CANCELLED", 0, 0}), 1) << "cancelled while pending";
  EXPECT_EQ(JobExitStatus({"NODE_FAIL", 0, 0}), 1);
}

TEST(SlurmJobWatchTest, FinalStates) {
  for (const char* final_state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}) {
    EXPECT_TRUE(IsFinalJobState(final_state)) << final_state;
  }
  for (const char* live : {"PENDING", "RUNNING", "COMPLETING", "REQUEUED", "CONFIGURING", "SUSPENDED", ""}) {
    EXPECT_FALSE(IsFinalJobState(live)) << live;
  }
  EXPECT_TRUE(IsFinalJobState(Recorded("cancelled").state));
}

TEST(SlurmJobWatchTest, ReadsSacct) {
  Result<JobEnd> end = ParseSacctLine("FAILED|7:0\n");
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->state, "FAILED");
  EXPECT_EQ(end->exit_code, 7);
  Result<JobEnd> cancelled = ParseSacctLine("CANCELLED by 0|0:15\n");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->state, "CANCELLED");
  EXPECT_EQ(JobExitStatus(*cancelled), 143);
  EXPECT_FALSE(ParseSacctLine("").ok());
  EXPECT_FALSE(ParseScontrolJob("slurm_load_jobs error: Invalid job id specified").ok());
}

}  // namespace
}  // namespace primus::runtime
