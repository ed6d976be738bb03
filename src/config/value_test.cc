#include "config/value.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/yaml_parser.h"

namespace primus::config {
namespace {

TEST(ValueTest, FindFollowsDottedPaths) {
  Value root = Value::EmptyMap();
  ASSERT_TRUE(root.Set("direct.env.NCCL_DEBUG", Value::String("INFO")).ok());
  ASSERT_NE(root.Find("direct.env.NCCL_DEBUG"), nullptr);
  EXPECT_EQ(root.Find("direct.env.NCCL_DEBUG")->AsString(), "INFO");
  EXPECT_TRUE(root.Find("direct")->IsMap());
  EXPECT_EQ(root.Find("direct.nnodes"), nullptr);
  EXPECT_EQ(root.Find("direct.env.NCCL_DEBUG.deeper"), nullptr);  // through a scalar
}

TEST(ValueTest, PutKeepsInsertionOrderAndReplacesInPlace) {
  Value map = Value::EmptyMap();
  map.Put("b", Value::Int(1));
  map.Put("A", Value::Int(2));
  map.Put("b", Value::Int(3));
  ASSERT_EQ(map.AsMap().size(), 2u);
  EXPECT_EQ(map.AsMap()[0].first, "b");
  EXPECT_EQ(map.AsMap()[0].second.AsInt(), 3);
  EXPECT_EQ(map.AsMap()[1].first, "A");  // case preserved
  EXPECT_TRUE(map.Remove("b"));
  EXPECT_FALSE(map.Remove("b"));
}

TEST(ValueTest, SetThroughAScalarNamesTheScalarAndItsOrigin) {
  Value root = Value::EmptyMap();
  ASSERT_TRUE(root.Set("train.lr", Value::Double(0.1, Origin::File("exp.yaml", 3, 7))).ok());
  Status status = root.Set("train.lr.warmup", Value::Int(5));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message,
            "cannot set 'train.lr.warmup': 'train.lr' is a number (0.1) from exp.yaml:3:7, not a map");
}

TEST(ValueTest, ToJsonKeepsTypesAndOrder) {
  Value root = Value::EmptyMap();
  root.Put("zeta", Value::Int(1));
  root.Put("alpha", Value::Double(0.5));
  root.Put("list", Value::EmptyList());
  root.Find("list")->Append(Value::Bool(true));
  root.Find("list")->Append(Value::Null());
  root.Put("s", Value::String("x"));
  EXPECT_EQ(root.ToJson().dump(), R"({"zeta":1,"alpha":0.5,"list":[true,null],"s":"x"})");
}

Value Parse(std::string_view text) {
  YamlParseOptions options;
  options.source = "test";
  Result<Value> value = ParseYaml(text, options);
  EXPECT_TRUE(value.ok()) << value.error().message;
  return value.ok() ? *value : Value();
}

TEST(ValueTest, ToYamlRoundTrips) {
  Value root = Parse(R"(
name: gpt
count: 3
ratio: 1.0
flag: false
nothing: null
number_like_string: "42"
bool_like_string: "true"
empty_string: ""
tricky: "a: b # c"
spaces: " padded "
UPPER: {}
empty_list: []
nested:
  list: [1, [2, 3], {k: v}]
  maps:
    - name: a
      size: 1
    - name: b
)");
  std::string yaml = root.ToYaml();
  Value back = Parse(yaml);
  EXPECT_EQ(back, root) << yaml;
  EXPECT_NE(yaml.find("number_like_string: \"42\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("ratio: 1.0\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  maps:\n    - name: a\n      size: 1\n    - name: b\n"), std::string::npos)
      << yaml;
}

TEST(ValueTest, ToYamlCanEscapeDollarsForReloadWithInterpolation) {
  Value root = Value::EmptyMap();
  root.Put("cmd", Value::String("echo ${HOME} $$"));
  EXPECT_EQ(root.ToYaml(), "cmd: echo ${HOME} $$\n");
  EXPECT_EQ(root.ToYaml(/*escape_dollars_for_reload=*/true), "cmd: echo $${HOME} $$$$\n");
  Environment env({{"HOME", "/root"}});
  YamlParseOptions options;
  options.source = "reload";
  options.environment = &env;
  Result<Value> back = ParseYaml(root.ToYaml(true), options);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, root);
}

TEST(ValueTest, DescribeForMessage) {
  EXPECT_EQ(Value::String("two").DescribeForMessage(), "a string ('two')");
  EXPECT_EQ(Value::Int(2).DescribeForMessage(), "an integer (2)");
  EXPECT_EQ(Value::Bool(true).DescribeForMessage(), "a boolean (true)");
  EXPECT_EQ(Value::EmptyList().DescribeForMessage(), "a list");
  EXPECT_EQ(Value::Null().DescribeForMessage(), "null (an empty value)");
}

}  // namespace
}  // namespace primus::config
