#include "runtime/slurm_job_token.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

TEST(SlurmJobTokenTest, ThirtyTwoRandomHexCharacters) {
  Result<std::string> first = NewJobToken();
  Result<std::string> second = NewJobToken();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->size(), 32u);
  EXPECT_EQ(first->find_first_not_of("0123456789abcdef"), std::string::npos) << *first;
  EXPECT_NE(*first, *second);
}

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
