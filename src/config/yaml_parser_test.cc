#include "config/yaml_parser.h"

#include <gtest/gtest.h>

namespace primus::config {
namespace {

Result<Value> Parse(std::string_view text, const Environment* env = nullptr) {
  YamlParseOptions options;
  options.source = "inline.yaml";
  options.environment = env;
  return ParseYaml(text, options);
}

TEST(YamlParserTest, EveryNodeKnowsItsLineAndColumn) {
  Result<Value> value = Parse("model:\n  layers: 24\n  mounts: [/a, /b]\n");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(value->Find("model.layers")->origin().Describe(), "inline.yaml:2:11");
  EXPECT_EQ(value->Find("model.mounts")->AsList()[1].origin().Describe(), "inline.yaml:3:16");
  // A block map starts on the next line; it is located at its key.
  EXPECT_EQ(value->Find("model")->origin().Describe(), "inline.yaml:1:1");
  EXPECT_EQ(value->Find("model.layers")->key_origin().Describe(), "inline.yaml:2:3");
}

TEST(YamlParserTest, UnclosedQuotesAreFoundEvenWhereYamlCppAcceptsThem) {
  Result<Value> value = Parse("a: 'it''s fine'\nb: \"esc \\\" ok\"\nc: \"\u00e9 ok\"\nd: \"never\ne: 1\n");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message, "inline.yaml:4:4: invalid YAML: this quoted string is never closed");
  // Columns count bytes (as yaml-cpp does), so UTF-8 before the quote is fine.
  Result<Value> utf8 = Parse("\xEF\xBB\xBF\xC3\xA9t\xC3\xA9: 'open\n");
  ASSERT_FALSE(utf8.ok());
  EXPECT_EQ(utf8.error().message, "inline.yaml:1:8: invalid YAML: this quoted string is never closed");
  Result<Value> multi_line = Parse("a: \"spans\n  two lines\"\n");
  ASSERT_TRUE(multi_line.ok()) << multi_line.error().message;
  EXPECT_EQ(*multi_line->Find("a"), Value::String("spans two lines"));
}

TEST(YamlParserTest, EmptyValueIsNullLocatedAtItsKey) {
  Result<Value> value = Parse("a:\nb: 1\n");
  ASSERT_TRUE(value.ok());
  EXPECT_TRUE(value->Find("a")->IsNull());
  EXPECT_EQ(value->Find("a")->origin().Describe(), "inline.yaml:1:1");
}

TEST(YamlParserTest, EmptyTextIsNull) {
  Result<Value> value = Parse("# nothing but a comment\n");
  ASSERT_TRUE(value.ok());
  EXPECT_TRUE(value->IsNull());
}

TEST(YamlParserTest, ExtendsChainAppearsInOrigins) {
  YamlParseOptions options;
  options.source = "base.yaml";
  options.extends_chain = {"exp.yaml", "mid.yaml"};
  Result<Value> value = ParseYaml("x: 1\n", options);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->Find("x")->origin().Describe(), "base.yaml:1:4 (via mid.yaml <- exp.yaml)");
}

TEST(YamlParserTest, InterpolatedPlainScalarsAreTypedQuotedStayStrings) {
  Environment env({{"N", "8"}});
  Result<Value> value = Parse("plain: ${N}\nquoted: '${N}'\nblock: |\n  ${N}\n", &env);
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(*value->Find("plain"), Value::Int(8));
  EXPECT_EQ(*value->Find("quoted"), Value::String("8"));
  EXPECT_EQ(*value->Find("block"), Value::String("8\n"));
}

TEST(YamlParserTest, KeysAreNeverInterpolated) {
  Environment env;
  Result<Value> value = Parse("${NOT_A_VAR}: 1\n", &env);
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_NE(value->Get("${NOT_A_VAR}"), nullptr);
}

TEST(YamlParserTest, InterpolationErrorPointsAtTheScalar) {
  Environment env;
  Result<Value> value = Parse("a: 1\nb: [x, \"${MISSING}\"]\n", &env);
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message,
            "inline.yaml:2:8: environment variable MISSING is not set (needed by '${MISSING}')");
}

TEST(YamlParserTest, WithoutAnEnvironmentStringsStayAsWritten) {
  Result<Value> value = Parse("a: ${X}\n");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value->Find("a"), Value::String("${X}"));
}

TEST(YamlParserTest, CoreTags) {
  Result<Value> value = Parse("s: !!str 12\ni: !!int 0x10\nf: !!float 3\nb: !!bool true\n");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(*value->Find("s"), Value::String("12"));
  EXPECT_EQ(*value->Find("i"), Value::Int(16));
  EXPECT_EQ(*value->Find("f"), Value::Double(3));
  EXPECT_EQ(*value->Find("b"), Value::Bool(true));
}

TEST(YamlParserTest, BadTagsAreLocatedErrors) {
  Result<Value> wrong = Parse("a: 1\nb: !!int twelve\n");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "inline.yaml:2:4: 'twelve' is not a valid !!int");
  Result<Value> unknown = Parse("a: !custom x\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "inline.yaml:1:4: unsupported YAML tag '!custom'");
}

TEST(YamlParserTest, ComplexKeysAreRejected) {
  Result<Value> value = Parse("? [a, b]\n: 1\n");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message, "inline.yaml:1:3: a list or map cannot be a map key");
}

TEST(YamlParserTest, MergeKeyMustReferToMaps) {
  Result<Value> value = Parse("base: &b [1, 2]\nexp:\n  <<: *b\n");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message,
            "inline.yaml:3:3: the merge key '<<' lists an integer (1); every entry must be a map");
}

TEST(YamlParserTest, QuotedMergeKeyIsAnOrdinaryKey) {
  Result<Value> value = Parse("\"<<\": plain\n");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(*value->Find("<<"), Value::String("plain"));
}

TEST(YamlParserTest, TwoMergeKeysInOneMapAreAnError) {
  Result<Value> value = Parse("a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: *a\n  <<: *b\n");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().message,
            "inline.yaml:5:3: a second merge key '<<' in the same map (the first is at inline.yaml:4:3)");
  EXPECT_EQ(value.error().hint, "merge several maps with one key: <<: [*first, *second]");
}

}  // namespace
}  // namespace primus::config
