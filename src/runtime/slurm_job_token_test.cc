#include "runtime/slurm_job_token.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

TEST(SlurmJobTokenTest, TheUsersTokenIsKept) {
  Result<std::map<std::string, std::string>> kept = JobTokenEnvironment({{"PRIMUS_JOB_TOKEN", "mine"}});
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->empty()) << "nothing to add: the environment already has one";

  for (const std::map<std::string, std::string>& without :
       {std::map<std::string, std::string>{}, std::map<std::string, std::string>{{"PRIMUS_JOB_TOKEN", ""}}}) {
    Result<std::map<std::string, std::string>> added = JobTokenEnvironment(without);
    ASSERT_TRUE(added.ok());
    ASSERT_EQ(added->count("PRIMUS_JOB_TOKEN"), 1u);
    EXPECT_EQ(added->at("PRIMUS_JOB_TOKEN").size(), 32u);
  }
}

}  // namespace
}  // namespace primus::runtime
