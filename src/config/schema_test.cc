#include "config/schema.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "config/launcher_schema.h"
#include "config/yaml_parser.h"

namespace primus::config {
namespace {

const Schema& TestSchema() {
  static const Schema schema({
      {"run.name", ValueType::kString, "", "run name"},
      {"run.nodes", ValueType::kInt, "1", "number of nodes"},
      {"run.lr", ValueType::kDouble, "0.1", "learning rate"},
      {"run.debug", ValueType::kBool, "false", "debug mode"},
      {"run.mounts", ValueType::kStringList, "", "bind mounts"},
      {"run.env", ValueType::kStringMap, "", "worker environment"},
      {"run.extra", ValueType::kAny, "", "anything"},
      {"other.image", ValueType::kString, "", "image"},
  });
  return schema;
}

Value Yaml(std::string_view text) {
  YamlParseOptions options;
  options.source = "layer.yaml";
  Result<Value> value = ParseYaml(text, options);
  EXPECT_TRUE(value.ok()) << value.error().message;
  return value.ok() ? *value : Value();
}

Status Check(Value* layer, ScalarSource source = ScalarSource::kTyped) {
  return TestSchema().Validate(layer, source);
}

std::string CheckError(std::string_view text) {
  Value layer = Yaml(text);
  Status status = Check(&layer);
  if (status.ok()) return "valid";
  EXPECT_EQ(status.error().code, ExitCode::kConfig);
  return status.error().message;
}

TEST(SchemaTest, DefaultsHaveTheirTypesAndOrigin) {
  Value defaults = TestSchema().Defaults();
  EXPECT_EQ(*defaults.Find("run.nodes"), Value::Int(1));
  EXPECT_EQ(*defaults.Find("run.lr"), Value::Double(0.1));
  EXPECT_EQ(*defaults.Find("run.debug"), Value::Bool(false));
  EXPECT_EQ(*defaults.Find("run.mounts"), Value::EmptyList());
  EXPECT_EQ(*defaults.Find("run.env"), Value::EmptyMap());
  EXPECT_EQ(defaults.Find("run.nodes")->origin().Describe(), "default");
}

TEST(SchemaTest, UnknownKeySuggestsTheClosestKeyAtTheKeyLocation) {
  Value layer = Yaml("run:\n  nodes: 2\n  nods: 3\n");
  Status status = Check(&layer);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "layer.yaml:3:3: unknown key 'run.nods' (did you mean 'run.nodes'?)");
  EXPECT_EQ(status.error().hint,
            "the keys of 'run' are: name, nodes, lr, debug, mounts, env, extra");
}

TEST(SchemaTest, UnknownKeyWithoutACloseMatchHasNoSuggestion) {
  EXPECT_EQ(CheckError("run:\n  zzzzzz: 1\n"), "layer.yaml:2:3: unknown key 'run.zzzzzz'");
}

TEST(SchemaTest, KeyInTheWrongSectionSuggestsWhereItBelongs) {
  EXPECT_EQ(CheckError("image: x\n"), "layer.yaml:1:1: unknown key 'image' (did you mean 'other.image'?)");
  EXPECT_EQ(CheckError("rn:\n  nodes: 1\n"), "layer.yaml:1:1: unknown key 'rn' (did you mean 'run'?)");
}

TEST(SchemaTest, WrongTypeSaysWhatWasExpectedAndFound) {
  EXPECT_EQ(CheckError("run:\n  nodes: two\n"),
            "layer.yaml:2:10: run.nodes: expected an integer, got a string ('two')");
  EXPECT_EQ(CheckError("run:\n  nodes: 1.5\n"),
            "layer.yaml:2:10: run.nodes: expected an integer, got a number (1.5)");
  EXPECT_EQ(CheckError("run:\n  debug: \"true\"\n"),
            "layer.yaml:2:10: run.debug: expected a boolean (true or false), got a string ('true')");
  EXPECT_EQ(CheckError("run:\n  name: [a]\n"),
            "layer.yaml:2:9: run.name: expected a string, got a list");
  EXPECT_EQ(CheckError("run:\n  mounts: /a:/a\n"),
            "layer.yaml:2:11: run.mounts: expected a list of strings, got a string ('/a:/a')");
  EXPECT_EQ(CheckError("run:\n  mounts: [/a, [b]]\n"),
            "layer.yaml:2:16: run.mounts: expected a string in the list, got a list");
  EXPECT_EQ(CheckError("run:\n  env: {A: [1]}\n"),
            "layer.yaml:2:12: run.env: expected a string for 'A', got a list");
  EXPECT_EQ(CheckError("run: 3\n"),
            "layer.yaml:1:6: run: expected a map of settings, got an integer (3)");
}

TEST(SchemaTest, LosslessConversionsOfTypedValues) {
  Value layer = Yaml(
      "run:\n  name: 1000\n  lr: 1\n  mounts: [/a, 2]\n  env: {A: 1, B: true, C: ~, D: x}\n"
      "  extra: [anything, {goes: here}]\nother:\n");
  ASSERT_TRUE(Check(&layer).ok());
  EXPECT_EQ(*layer.Find("run.name"), Value::String("1000"));
  EXPECT_EQ(*layer.Find("run.lr"), Value::Double(1.0));
  EXPECT_EQ(layer.Find("run.mounts")->AsList()[1], Value::String("2"));
  EXPECT_EQ(*layer.Find("run.env.A"), Value::String("1"));
  EXPECT_EQ(*layer.Find("run.env.B"), Value::String("true"));
  EXPECT_EQ(*layer.Find("run.env.C"), Value::String(""));
  EXPECT_TRUE(layer.Find("other")->IsMap());  // an empty section is fine
  EXPECT_EQ(layer.Find("run.lr")->origin().Describe(), "layer.yaml:3:7");  // origin kept
}

TEST(SchemaTest, NullMeansEmptyForStringsListsAndMapsButNotNumbers) {
  Value layer = Yaml("run:\n  name:\n  mounts:\n  env:\n");
  ASSERT_TRUE(Check(&layer).ok());
  EXPECT_EQ(*layer.Find("run.name"), Value::String(""));
  EXPECT_EQ(*layer.Find("run.mounts"), Value::EmptyList());
  EXPECT_EQ(*layer.Find("run.env"), Value::EmptyMap());
  EXPECT_EQ(CheckError("run:\n  nodes:\n"),
            "layer.yaml:2:3: run.nodes: expected an integer, got null (an empty value)");
}

TEST(SchemaTest, TextIsConvertedToTheKeyType) {
  Value layer = Value::EmptyMap();
  Origin env = Origin::Env("X");
  ASSERT_TRUE(layer.Set("run.nodes", Value::String("2", env)).ok());
  ASSERT_TRUE(layer.Set("run.lr", Value::String("3e-4", env)).ok());
  ASSERT_TRUE(layer.Set("run.debug", Value::String("yes", env)).ok());
  ASSERT_TRUE(layer.Set("run.mounts", Value::String("/a:/a, /b:/b,", env)).ok());
  ASSERT_TRUE(layer.Set("run.env", Value::String("A=1, B=x=y", env)).ok());
  ASSERT_TRUE(layer.Set("run.extra", Value::String("12", env)).ok());
  ASSERT_TRUE(Check(&layer, ScalarSource::kText).ok());
  EXPECT_EQ(*layer.Find("run.nodes"), Value::Int(2));
  EXPECT_EQ(*layer.Find("run.lr"), Value::Double(3e-4));
  EXPECT_EQ(*layer.Find("run.debug"), Value::Bool(true));
  ASSERT_EQ(layer.Find("run.mounts")->AsList().size(), 2u);
  EXPECT_EQ(layer.Find("run.mounts")->AsList()[1], Value::String("/b:/b"));
  EXPECT_EQ(*layer.Find("run.env.B"), Value::String("x=y"));
  EXPECT_EQ(*layer.Find("run.extra"), Value::Int(12));
  EXPECT_EQ(layer.Find("run.nodes")->origin().Describe(), "env X");
}

TEST(SchemaTest, TextThatDoesNotConvertNamesItsOrigin) {
  Value layer = Value::EmptyMap();
  ASSERT_TRUE(layer.Set("run.nodes", Value::String("abc", Origin::Flag("--nodes"))).ok());
  Status status = Check(&layer, ScalarSource::kText);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::kConfig);
  EXPECT_EQ(status.error().message, "flag --nodes: run.nodes: expected an integer, got 'abc'");
  EXPECT_EQ(status.error().hint, "run.nodes: number of nodes");
}

TEST(SchemaTest, TypedSourcesDoNotParseStrings) {
  // "2" in quotes in a file is a string; only env/flag text is converted.
  EXPECT_EQ(CheckError("run:\n  nodes: \"2\"\n"),
            "layer.yaml:2:10: run.nodes: expected an integer, got a string ('2')");
}

TEST(LauncherSchemaTest, EveryKeyHasADescriptionAndADefaultOfItsType) {
  const Schema& schema = LauncherSchema();
  Value defaults = schema.Defaults();
  EXPECT_GT(schema.keys().size(), 40u);
  for (const SchemaKey& key : schema.keys()) {
    EXPECT_FALSE(key.description.empty()) << key.path;
    EXPECT_EQ(std::count(key.path.begin(), key.path.end(), '.'), 1) << key.path;
    ASSERT_NE(defaults.Find(key.path), nullptr) << key.path;
  }
  EXPECT_EQ(*defaults.Find("direct.nproc_per_node"), Value::String("auto"));
  EXPECT_EQ(*defaults.Find("direct.console_prefix"), Value::String("[{host}:{rank}] "));
  EXPECT_EQ(*defaults.Find("direct.term_timeout"), Value::Double(30.0));
  EXPECT_EQ(*defaults.Find("container.pull"), Value::String("missing"));
  EXPECT_EQ(*defaults.Find("k8s.namespace"), Value::String("default"));
  EXPECT_EQ(*defaults.Find("slurm.requeue"), Value::Bool(false));
}


TEST(SchemaTest, AQuotedDottedKeyIsRefusedNotIgnored) {
  // Find("run.nodes") matched it, but the tree has no 'run' map: the value
  // was validated, then never read.
  EXPECT_EQ(CheckError("\"run.nodes\": 3\n"),
            "layer.yaml:1:1: the key 'run.nodes' contains a dot; a key in a file names one level, so 'run.nodes' "
            "is no setting");
  EXPECT_EQ(CheckError("run:\n  \"env.x\": 3\n"),
            "layer.yaml:2:3: the key 'env.x' contains a dot; a key in a file names one level, so 'run.env.x' is "
            "no setting");
  Value layer = Yaml("\"run.nodes\": 3\n");
  EXPECT_EQ(Check(&layer).error().hint, "nest the keys instead: run: {nodes: 3}");
  // Inside free-form maps, dots are data.
  EXPECT_EQ(CheckError("run:\n  env: {a.b: 1}\n  extra: {x.y: 2}\n"), "valid");
}

TEST(SchemaTest, IntegersOutsideTheirKeysRangeAreLocated) {
  static const Schema schema({{"p.size", ValueType::kInt, "1", "a size", 1, 1024},
                              {"p.rank", ValueType::kInt, "0", "a rank", 0, INT64_MAX}});
  Value layer = Yaml("p:\n  size: 4611686018427387904\n");
  Status status = schema.Validate(&layer, ScalarSource::kTyped);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "layer.yaml:2:9: p.size: 4611686018427387904 is out of range; expected from 1 to 1024");
  Value negative = Yaml("p: {rank: -3}\n");
  EXPECT_EQ(schema.Validate(&negative, ScalarSource::kTyped).error().message,
            "layer.yaml:1:11: p.rank: -3 is out of range; expected at least 0");
  // Text (a variable, a flag) is checked after conversion.
  Value text = Value::EmptyMap();
  ASSERT_TRUE(text.Set("p.size", Value::String("0", Origin::Env("PRIMUS_P_SIZE"))).ok());
  EXPECT_EQ(schema.Validate(&text, ScalarSource::kText).error().message,
            "env PRIMUS_P_SIZE: p.size: 0 is out of range; expected from 1 to 1024");
  Value fine = Yaml("p: {size: 1024, rank: 0}\n");
  EXPECT_TRUE(schema.Validate(&fine, ScalarSource::kTyped).ok());
}

TEST(LauncherSchemaTest, NodeCountsAndPortsHaveRanges) {
  Value layer = Yaml("direct: {nnodes: -3}\n");
  EXPECT_EQ(LauncherSchema().Validate(&layer, ScalarSource::kTyped).error().message,
            "layer.yaml:1:18: direct.nnodes: -3 is out of range; expected from 1 to 262144");
  Value port = Yaml("direct: {master_port: 70000}\n");
  EXPECT_EQ(LauncherSchema().Validate(&port, ScalarSource::kTyped).error().message,
            "layer.yaml:1:23: direct.master_port: 70000 is out of range; expected from 0 to 65535");
}

}  // namespace
}  // namespace primus::config
