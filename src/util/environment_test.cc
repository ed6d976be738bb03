#include "util/environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace primus {
namespace {

TEST(EnvironmentTest, DistinguishesUnsetFromEmpty) {
  Environment env{{"EMPTY", ""}, {"SET", "x"}};
  EXPECT_EQ(Lookup(env, "SET"), "x");
  EXPECT_EQ(Lookup(env, "EMPTY"), "");
  EXPECT_EQ(Lookup(env, "UNSET"), std::nullopt);
}

TEST(EnvironmentTest, ProcessEnvironmentSnapshotsTheRealOne) {
  ::setenv("PRIMUS_ENVIRONMENT_TEST_VAR", "a=b", 1);
  Environment env = ProcessEnvironment();
  ::unsetenv("PRIMUS_ENVIRONMENT_TEST_VAR");
  EXPECT_EQ(Lookup(env, "PRIMUS_ENVIRONMENT_TEST_VAR"), "a=b");  // only the first '=' splits
}

}  // namespace
}  // namespace primus
