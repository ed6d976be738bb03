#include "config/interpolation.h"

#include <gtest/gtest.h>

namespace primus::config {
namespace {

const Origin kWhere = Origin::File("exp.yaml", 4, 7);

std::string Expand(std::string_view text, const Environment& env) {
  Result<std::string> result = Interpolate(text, env, kWhere);
  return result.ok() ? *result : "ERROR: " + result.error().message;
}

TEST(InterpolationTest, RequiredVariableIsReplaced) {
  Environment env({{"DATA", "/data"}});
  EXPECT_EQ(Expand("${DATA}/c4", env), "/data/c4");
}

TEST(InterpolationTest, MissingRequiredVariableIsALocatedErrorWithAHint) {
  Result<std::string> result = Interpolate("${DATA_DIR}/c4", Environment(), kWhere);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ExitCode::kConfig);
  EXPECT_EQ(result.error().message,
            "exp.yaml:4:7: environment variable DATA_DIR is not set (needed by '${DATA_DIR}')");
  EXPECT_EQ(result.error().hint,
            "export DATA_DIR=... before running, or give a default: ${DATA_DIR:default}");
}

TEST(InterpolationTest, DefaultAppliesOnlyWhenUnset) {
  Environment env({{"EMPTY", ""}, {"LR", "0.1"}});
  EXPECT_EQ(Expand("${LR:0.001}", env), "0.1");
  EXPECT_EQ(Expand("${NOPE:0.001}", env), "0.001");
  EXPECT_EQ(Expand("${EMPTY:fallback}", env), "");
  EXPECT_EQ(Expand("[${NOPE:}]", env), "[]");
  EXPECT_EQ(Expand("${NOPE:a:b}", env), "a:b");  // only the first ':' separates
}

TEST(InterpolationTest, DefaultMayNestAnotherVariable) {
  Environment env({{"ROOT", "/r"}});
  EXPECT_EQ(Expand("${OUT:${ROOT}/out}", env), "/r/out");
  EXPECT_EQ(Expand("${OUT:${NOPE:x}}", env), "x");
}

TEST(InterpolationTest, DoubleDollarIsALiteralDollar) {
  Environment env({{"A", "1"}});
  EXPECT_EQ(Expand("cost $$5 and $${A} and ${A}", env), "cost $5 and ${A} and 1");
  EXPECT_EQ(Expand("$HOME stays, trailing $", env), "$HOME stays, trailing $");
}

TEST(InterpolationTest, MalformedReferencesAreErrors) {
  EXPECT_EQ(Expand("${UNCLOSED", Environment()),
            "ERROR: exp.yaml:4:7: '${' is never closed in '${UNCLOSED'");
  EXPECT_EQ(Expand("${1X}", Environment()),
            "ERROR: exp.yaml:4:7: invalid variable name '1X' in '${1X}'");
  EXPECT_EQ(Expand("${}", Environment()), "ERROR: exp.yaml:4:7: invalid variable name '' in '${}'");
}


TEST(InterpolationTest, DefaultsNestAtMostSixteenDeep) {
  Environment env({{"SET", "v"}});
  auto nested = [](int depth) {
    std::string text;
    for (int i = 0; i < depth; ++i) text += "${UNSET:";
    return text + "x" + std::string(depth, '}');
  };
  EXPECT_EQ(Expand(nested(16), env), "x");
  EXPECT_EQ(Expand(nested(17), env).rfind("ERROR: exp.yaml:4:7: ${...} defaults are nested more than 16 deep", 0), 0u);
  // A set variable ends the nesting where it stands.
  EXPECT_EQ(Expand("${SET:" + nested(20000) + "}", env), "v");
}

}  // namespace
}  // namespace primus::config
