#include "util/json_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace primus::json_fields {
namespace {

TEST(JsonFieldsTest, ParseRefusesWhatIsNotOneJsonValueWithoutThrowing) {
  EXPECT_TRUE(Parse("{\"a\": 1}").has_value());
  EXPECT_TRUE(Parse("[1, 2]").has_value());
  for (const char* bad : {"", "{", "{\"a\": }", "nan", "{\"a\": 1} trailing", "\xff\xfe"}) {
    EXPECT_FALSE(Parse(bad).has_value()) << bad;
  }
  EXPECT_FALSE(ParseObject("[1]").has_value());
  EXPECT_FALSE(Parse("{\"a\": 1}", 4).has_value());  // longer than allowed
}

TEST(JsonFieldsTest, DeepNestingIsRefusedBeforeParsing) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  EXPECT_FALSE(Parse(deep).has_value());
  std::string ok = std::string(kMaxDepth, '[') + std::string(kMaxDepth, ']');
  EXPECT_TRUE(Parse(ok).has_value());
  // Brackets inside strings do not count.
  EXPECT_TRUE(Parse("{\"text\": \"" + std::string(1000, '[') + "\"}").has_value());
}

TEST(JsonFieldsTest, WrongTypesReadAsAbsentNeverThrow) {
  EXPECT_FALSE(Parse(R"({"lr": 1e400})").has_value());  // out of a double's range
  std::optional<Json> parsed = Parse(R"({"step": "7", "loss": null, "big": 1e30, "n": -3, "ok": true,
                        "host": 5, "list": {}, "object": [], "exact": 9007199254740993})");
  ASSERT_TRUE(parsed.has_value());
  const Json& json = *parsed;
  EXPECT_FALSE(SmallInteger(json, "step").has_value());
  EXPECT_FALSE(Number(json, "loss").has_value());
  EXPECT_FALSE(Number(json, "missing").has_value());
  EXPECT_FALSE(SmallInteger(json, "big").has_value());
  EXPECT_FALSE(Unsigned(json, "n").has_value());
  EXPECT_EQ(SmallInteger(json, "n"), -3);
  EXPECT_FALSE(IntegerIn(json, "n", 0, 10).has_value());
  EXPECT_EQ(Bool(json, "ok"), true);
  EXPECT_FALSE(Bool(json, "n").has_value());
  EXPECT_EQ(Text(json, "host", "?"), "?");
  EXPECT_TRUE(Array(json, "list").empty());
  EXPECT_TRUE(Object(json, "object").empty());
  EXPECT_EQ(Integer(json, "exact"), 9007199254740993);
  // Not an object at all.
  Json scalar = 3;
  EXPECT_FALSE(Number(scalar, "x").has_value());
  EXPECT_EQ(Text(scalar, "x"), "");
}

}  // namespace
}  // namespace primus::json_fields
