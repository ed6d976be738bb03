#include "config/yaml_parser.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <utility>

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


// CPU seconds of this process since `start` (std::clock()): what the work
// costs, whatever else the machine is running.
double SecondsSince(std::clock_t start) { return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC; }

// Nine levels of ten aliases each: 10^9 nodes if expanded.
std::string BillionLaughs() {
  std::string text = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level <= 9; ++level) {
    std::string previous = "*l" + std::to_string(level - 1);
    text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i ? ", " : "") + previous;
    text += "]\n";
  }
  return text;
}

TEST(YamlParserTest, ABillionLaughsIsRefusedAtTheAliasThatCrossesTheLimit) {
  std::clock_t start = std::clock();
  Result<Value> value = Parse(BillionLaughs());
  EXPECT_LT(SecondsSince(start), 1.0);
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().code, ExitCode::kConfig);
  // l0..l3 copy 12,330 nodes; l4's eighth copy of l3 (11,111 nodes each) crosses 100,000.
  EXPECT_EQ(value.error().message,
            "inline.yaml:5:45: the alias '*l3' expands the document past 100000 nodes copied by aliases (it copies "
            "11111 nodes)");
  EXPECT_NE(value.error().hint.find("extends:"), std::string::npos);
}

TEST(YamlParserTest, AliasesAndMergeKeysWithinTheLimitStillWork) {
  Result<Value> value = Parse("base: &b {lr: 0.1, steps: 5}\nrun: {<<: *b, steps: 7}\nlist: [*b, *b]\n");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(*value->Find("run.lr"), Value::Double(0.1));
  EXPECT_EQ(*value->Find("run.steps"), Value::Int(7));
  EXPECT_EQ(value->Find("list")->AsList().size(), 2u);
}

TEST(YamlParserTest, AMapOf100000KeysParsesInLinearTime) {
  std::string text = "model:\n";
  for (int i = 0; i < 100000; ++i) text += "  key_" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  text += "merged:\n  <<: &all {}\n";
  std::clock_t start = std::clock();
  Result<Value> value = Parse(text);
  EXPECT_LT(SecondsSince(start), 1.0) << "69 s before: every key searched every earlier key";
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(value->Find("model")->AsMap().size(), 100000u);
  EXPECT_EQ(*value->Find("model.key_99999"), Value::Int(99999));
  // Duplicates are still found among them.
  Result<Value> duplicate = Parse(text + "model2: {a: 1, b: 2, a: 3}\n");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.error().message.find("duplicate key 'a'"), std::string::npos);
}

TEST(YamlParserTest, MergingALargeMapIsLinear) {
  std::string text = "big: &big {";
  for (int i = 0; i < 50000; ++i) text += (i ? ", k" : "k") + std::to_string(i) + ": 1";
  text += "}\nover:\n  <<: *big\n  k7: 2\n";
  std::clock_t start = std::clock();
  Result<Value> value = Parse(text);
  EXPECT_LT(SecondsSince(start), 1.0);
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(value->Find("over")->AsMap().size(), 50000u);
  EXPECT_EQ(*value->Find("over.k7"), Value::Int(2));
}

TEST(YamlParserTest, NulControlCharactersAndInvalidUtf8InTheTextAreLocated) {
  const std::pair<std::string, std::string> cases[] = {
      {std::string("name: a\0b\n", 10), "inline.yaml:1:8: a NUL byte in the text"},
      {"a: 1\nname: caf\xE9\n", "inline.yaml:2:10: the text is not valid UTF-8 (byte 0xe9)"},
      {"name: \xC0\xAF\n", "inline.yaml:1:7: the text is not valid UTF-8 (byte 0xc0)"},
      {"name: a\x1B[31mred\n", "inline.yaml:1:8: a control character (0x1b) in the text"},
  };
  for (const auto& [text, expected] : cases) {
    Result<Value> value = Parse(text);
    ASSERT_FALSE(value.ok()) << expected;
    EXPECT_EQ(value.error().code, ExitCode::kConfig);
    EXPECT_EQ(value.error().message, expected);
  }
  // UTF-8, tabs inside quotes and CRLF line ends stay fine.
  Result<Value> fine = Parse("name: \"caf\xC3\xA9\tok\"\r\nb: 1\r\n");
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(*fine->Find("name"), Value::String("caf\xC3\xA9\tok"));
}

TEST(YamlParserTest, EscapesThatProduceNulOrInvalidUtf8AreRefused) {
  for (const char* text : {"name: \"a\\0b\"\n", "name: \"a\\x00b\"\n", "name: \"a\\u0000b\"\n", "\"a\\0b\": 1\n"}) {
    Result<Value> value = Parse(text);
    ASSERT_FALSE(value.ok()) << text;
    EXPECT_NE(value.error().message.find("inline.yaml:1:"), std::string::npos) << value.error().message;
    EXPECT_NE(value.error().message.find("a NUL character (\\0)"), std::string::npos) << value.error().message;
  }
  Result<Value> surrogate = Parse("name: \"\\uD800\"\n");  // yaml-cpp refuses it itself
  ASSERT_FALSE(surrogate.ok());
  EXPECT_EQ(surrogate.error().message.rfind("inline.yaml:1:", 0), 0u) << surrogate.error().message;
}

TEST(YamlParserTest, DeepNestingIsAnErrorNotACrash) {
  for (const std::string& text : {std::string(100000, '['), "a: " + std::string(100000, '{')}) {
    std::clock_t start = std::clock();
    Result<Value> value = Parse(text);
    EXPECT_LT(SecondsSince(start), 1.0);
    ASSERT_FALSE(value.ok());
    EXPECT_EQ(value.error().code, ExitCode::kConfig);
    EXPECT_NE(value.error().message.find("inline.yaml:1:"), std::string::npos) << value.error().message;
  }
}

TEST(YamlParserTest, TwentyThousandNestedDefaultsAreAnError) {
  std::string text = "name: ";
  for (int i = 0; i < 20000; ++i) text += "${X:";
  text += "x" + std::string(20000, '}') + "\n";
  Environment env({});
  std::clock_t start = std::clock();
  Result<Value> value = Parse(text, &env);
  EXPECT_LT(SecondsSince(start), 1.0);
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.error().message.find("inline.yaml:1:7: ${...} defaults are nested more than 16 deep"),
            std::string::npos)
      << value.error().message.substr(0, 300);
  EXPECT_LT(value.error().message.size(), 300u) << "the message shows the start of the text only";
}

}  // namespace
}  // namespace primus::config
