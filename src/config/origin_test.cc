#include "config/origin.h"

#include <gtest/gtest.h>

namespace primus::config {
namespace {

TEST(OriginTest, FileLocationIsOneBasedLineAndColumn) {
  EXPECT_EQ(Origin::File("exp.yaml", 12, 5).Describe(), "exp.yaml:12:5");
}

TEST(OriginTest, ExtendsChainReadsInnermostFirst) {
  Origin origin = Origin::File("base.yaml", 3, 1, {"exp.yaml", "mid.yaml"});
  EXPECT_EQ(origin.Describe(), "base.yaml:3:1 (via mid.yaml <- exp.yaml)");
}

TEST(OriginTest, NonFileSourcesHaveNoPosition) {
  EXPECT_EQ(Origin::Env("PRIMUS_CONTAINER_IMAGE").Describe(), "env PRIMUS_CONTAINER_IMAGE");
  EXPECT_EQ(Origin::Flag("--image").Describe(), "flag --image");
  EXPECT_EQ(Origin::Default().Describe(), "default");
  EXPECT_EQ(Origin::Set().Describe(), "--set");
  EXPECT_EQ(Origin::ProgramDefault("torchrun").Describe(), "torchrun default");
}

TEST(OriginTest, ConfigErrorAtPrefixesTheLocationAndUsesExitCodeThree) {
  Error error = ConfigErrorAt(Origin::File("a.yaml", 2, 7), "bad value", "fix it");
  EXPECT_EQ(error.code, ExitCode::kConfig);
  EXPECT_EQ(error.message, "a.yaml:2:7: bad value");
  EXPECT_EQ(error.hint, "fix it");
}

}  // namespace
}  // namespace primus::config
