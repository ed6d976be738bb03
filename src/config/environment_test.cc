#include "config/environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace primus::config {
namespace {

TEST(EnvironmentTest, DistinguishesUnsetFromEmpty) {
  Environment env({{"EMPTY", ""}, {"SET", "x"}});
  EXPECT_EQ(env.Get("SET"), "x");
  EXPECT_EQ(env.Get("EMPTY"), "");
  EXPECT_EQ(env.Get("UNSET"), std::nullopt);
}

TEST(EnvironmentTest, FromProcessSnapshotsTheRealEnvironment) {
  ::setenv("PRIMUS_ENVIRONMENT_TEST_VAR", "a=b", 1);
  Environment env = Environment::FromProcess();
  ::unsetenv("PRIMUS_ENVIRONMENT_TEST_VAR");
  EXPECT_EQ(env.Get("PRIMUS_ENVIRONMENT_TEST_VAR"), "a=b");  // only the first '=' splits
}

}  // namespace
}  // namespace primus::config
