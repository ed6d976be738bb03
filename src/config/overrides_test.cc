#include "config/overrides.h"

#include <gtest/gtest.h>

namespace primus::config {
namespace {

Value Apply(std::initializer_list<std::string_view> assignments) {
  Value root = Value::EmptyMap();
  for (std::string_view assignment : assignments) {
    Status status = ApplyOverride(&root, assignment, Origin::Set());
    EXPECT_TRUE(status.ok()) << assignment << ": " << status.error().message;
  }
  return root;
}

Error ApplyError(std::initializer_list<std::string_view> assignments) {
  Value root = Value::EmptyMap();
  for (std::string_view assignment : assignments) {
    Status status = ApplyOverride(&root, assignment, Origin::Set());
    if (!status.ok()) return status.error();
  }
  ADD_FAILURE() << "no error";
  return Error{};
}

TEST(OverridesTest, ValuesAreTypedLikePlainYamlScalars) {
  Value root = Apply({"train.lr=1e-3", "model.layers=24", "fp8=true", "name=gpt-7b", "off=no",
                      "ratio=.5", "addr=10.0.0.1", "time=4:00:00"});
  EXPECT_EQ(*root.Find("train.lr"), Value::Double(0.001));
  EXPECT_EQ(*root.Find("model.layers"), Value::Int(24));
  EXPECT_EQ(*root.Find("fp8"), Value::Bool(true));
  EXPECT_EQ(*root.Find("name"), Value::String("gpt-7b"));
  EXPECT_EQ(*root.Find("off"), Value::String("no"));  // YAML 1.2: not a boolean
  EXPECT_EQ(*root.Find("ratio"), Value::Double(0.5));
  EXPECT_EQ(*root.Find("addr"), Value::String("10.0.0.1"));
  EXPECT_EQ(*root.Find("time"), Value::String("4:00:00"));
  EXPECT_EQ(root.Find("train.lr")->origin().Describe(), "--set");
}

TEST(OverridesTest, EmptyValueIsNull) {
  Value root = Apply({"a.b="});
  ASSERT_NE(root.Find("a.b"), nullptr);
  EXPECT_TRUE(root.Find("a.b")->IsNull());
}

TEST(OverridesTest, OnlyTheFirstEqualsSplits) {
  Value root = Apply({"direct.env.OPTS=--x=1"});
  EXPECT_EQ(*root.Find("direct.env.OPTS"), Value::String("--x=1"));
}

TEST(OverridesTest, FlowAndQuotedValuesAreReadAsYaml) {
  Value root = Apply({"a.list=[1, two, 3.5]", "a.map={x: 1, y: [a]}", "a.quoted=\"2\"",
                      "a.single='true'", "a.text=x # not a comment"});
  const Value& list = *root.Find("a.list");
  ASSERT_TRUE(list.IsList());
  EXPECT_EQ(list.AsList()[0], Value::Int(1));
  EXPECT_EQ(list.AsList()[1], Value::String("two"));
  EXPECT_EQ(list.AsList()[2], Value::Double(3.5));
  EXPECT_EQ(list.AsList()[1].origin().Describe(), "--set");
  EXPECT_EQ(*root.Find("a.map.x"), Value::Int(1));
  EXPECT_EQ(*root.Find("a.quoted"), Value::String("2"));
  EXPECT_EQ(*root.Find("a.single"), Value::String("true"));
  EXPECT_EQ(*root.Find("a.text"), Value::String("x # not a comment"));
}

TEST(OverridesTest, LaterAssignmentsReplaceEarlierOnes) {
  Value root = Apply({"a.b=1", "a.c=2", "a.b=3", "a={x: 1}"});
  EXPECT_EQ(root.Find("a.b"), nullptr);  // "a" itself was replaced by a map
  EXPECT_EQ(*root.Find("a.x"), Value::Int(1));
}

TEST(OverridesTest, BadSyntaxIsAUsageErrorShowingTheRightForm) {
  Error no_equals = ApplyError({"direct.nnodes"});
  EXPECT_EQ(no_equals.code, ExitCode::kUsage);
  EXPECT_EQ(no_equals.message, "--set: 'direct.nnodes': expected key=value");
  EXPECT_EQ(no_equals.hint, "write key=value with a dotted key, e.g. direct.nnodes=2");
  EXPECT_EQ(ApplyError({"=3"}).message, "--set: '=3': the key before '=' is empty");
  Error empty_part = ApplyError({"a..b=1"});
  EXPECT_EQ(empty_part.code, ExitCode::kUsage);
  EXPECT_EQ(empty_part.message, "--set: 'a..b=1': the key 'a..b' has an empty part");
  EXPECT_EQ(ApplyError({".a=1"}).message, "--set: '.a=1': the key '.a' has an empty part");
  EXPECT_EQ(ApplyError({"--lr=0.1"}).message, "--set: '--lr=0.1': a key cannot start with '-'");
  EXPECT_EQ(ApplyError({"a b=1"}).message, "--set: 'a b=1': the key contains a space");
}

TEST(OverridesTest, SettingThroughAScalarNamesBothAssignments) {
  Value root = Value::EmptyMap();
  ASSERT_TRUE(ApplyOverride(&root, "a=1", Origin::Flag("--first")).ok());
  Status status = ApplyOverride(&root, "a.b=2", Origin::Set());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::kUsage);
  EXPECT_EQ(status.error().message,
            "--set: 'a.b=2': cannot set 'a.b': 'a' is an integer (1) from flag --first, not a map");
}

TEST(OverridesTest, MalformedFlowValueIsAUsageError) {
  Error error = ApplyError({"a=[1, 2"});
  EXPECT_EQ(error.code, ExitCode::kUsage);
  EXPECT_EQ(error.message,
            "--set: cannot read value '[1, 2':1:1: invalid YAML: end of sequence flow not found");
}

}  // namespace
}  // namespace primus::config
