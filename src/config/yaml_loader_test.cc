#include "config/yaml_loader.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <ctime>
#include <cmath>
#include <utility>

#include "config/testdata_path.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::config {
namespace {

Value Load(std::string_view name, const Environment& env = Environment()) {
  Result<Value> value = LoadYamlFile(TestDataPath(name), env);
  EXPECT_TRUE(value.ok()) << value.error().message;
  return value.ok() ? *value : Value();
}

// The error message, with the testdata directory shown as "testdata/".
std::string LoadError(std::string_view name, const Environment& env = Environment()) {
  Result<Value> value = LoadYamlFile(TestDataPath(name), env);
  if (value.ok()) return "loaded without error";
  EXPECT_EQ(value.error().code, ExitCode::kConfig);
  std::string message = value.error().message;
  std::string dir = TestDataPath("");
  for (size_t at; (at = message.find(dir)) != std::string::npos;) message.replace(at, dir.size(), "testdata/");
  return message;
}

std::string ErrorHint(std::string_view name, const Environment& env = Environment()) {
  Result<Value> value = LoadYamlFile(TestDataPath(name), env);
  return value.ok() ? "" : value.error().hint;
}

TEST(YamlLoaderTest, PlainScalarsFollowTheCoreSchemaQuotedStayStrings) {
  Value v = Load("types.yaml");
  EXPECT_TRUE(v.Find("empty")->IsNull());
  EXPECT_TRUE(v.Find("tilde")->IsNull());
  EXPECT_TRUE(v.Find("null_word")->IsNull());
  EXPECT_EQ(*v.Find("yes_word"), Value::String("yes"));
  EXPECT_EQ(*v.Find("true_word"), Value::Bool(true));
  EXPECT_EQ(*v.Find("false_upper"), Value::Bool(false));
  EXPECT_EQ(*v.Find("int"), Value::Int(42));
  EXPECT_EQ(*v.Find("negative"), Value::Int(-7));
  EXPECT_EQ(*v.Find("hex"), Value::Int(31));
  EXPECT_EQ(*v.Find("octal"), Value::Int(15));
  EXPECT_EQ(*v.Find("float"), Value::Double(0.5));
  EXPECT_EQ(*v.Find("exponent"), Value::Double(0.001));
  EXPECT_EQ(*v.Find("infinity"), Value::Double(INFINITY));
  EXPECT_EQ(*v.Find("minus_infinity"), Value::Double(-INFINITY));
  EXPECT_TRUE(std::isnan(v.Find("not_a_number")->AsDouble()));
  EXPECT_TRUE(v.Find("huge")->IsDouble());
  EXPECT_EQ(*v.Find("quoted_int"), Value::String("42"));
  EXPECT_EQ(*v.Find("single_quoted_bool"), Value::String("true"));
  EXPECT_EQ(*v.Find("version"), Value::String("1.2.3"));
  EXPECT_EQ(*v.Find("time"), Value::String("4:00:00"));
  EXPECT_EQ(*v.Find("block"), Value::String("line one\nline two\n"));
  EXPECT_EQ(*v.Find("tagged_str"), Value::String("12"));
  EXPECT_EQ(*v.Find("tagged_float"), Value::Double(3));
}

TEST(YamlLoaderTest, CommentsAfterValuesAreNotPartOfThem) {
  Value v = Load("types.yaml");
  EXPECT_EQ(*v.Find("path"), Value::String("/data/c4"));
  EXPECT_EQ(*v.Find("yes_word"), Value::String("yes"));
  EXPECT_EQ(*v.Find("hash_in_value"), Value::String("a#b"));  // no space before '#': not a comment
  EXPECT_EQ(*v.Find("quoted_hash"), Value::String("a # b"));
}

TEST(YamlLoaderTest, FlowListsAndMapsAreCollectionsNotStrings) {
  Value v = Load("types.yaml");
  const Value& list = *v.Find("flow_list");
  ASSERT_TRUE(list.IsList());
  ASSERT_EQ(list.AsList().size(), 4u);
  EXPECT_EQ(list.AsList()[0], Value::Int(1));
  EXPECT_EQ(list.AsList()[1], Value::String("two"));
  EXPECT_EQ(list.AsList()[2], Value::String("3"));
  EXPECT_EQ(list.AsList()[3], Value::Double(4.5));
  EXPECT_EQ(*v.Find("flow_map.x"), Value::Int(1));
  EXPECT_EQ(v.Find("flow_map.y")->AsList().size(), 2u);
}

TEST(YamlLoaderTest, UpperCaseKeysSurvive) {
  Value v = Load("types.yaml");
  EXPECT_EQ(*v.Find("UPPER_CASE_KEY"), Value::String("kept"));
  EXPECT_EQ(*v.Find("MixedCase.NCCL_DEBUG"), Value::String("INFO"));
  EXPECT_EQ(v.Find("upper_case_key"), nullptr);
}

TEST(YamlLoaderTest, AnchorsAliasesAndMergeKeys) {
  Value v = Load("anchors.yaml");
  // <<: *defaults with an explicit lr: the explicit key wins.
  EXPECT_EQ(*v.Find("exp_single.lr"), Value::Double(0.01));
  EXPECT_EQ(*v.Find("exp_single.batch"), Value::Int(32));
  EXPECT_EQ(*v.Find("exp_single.optimizer"), Value::String("adam"));
  EXPECT_EQ(v.Find("exp_single.<<"), nullptr);
  // Merged keys take the place of the << line.
  const Value::Map& single = v.Find("exp_single")->AsMap();
  ASSERT_EQ(single.size(), 4u);
  EXPECT_EQ(single[0].first, "name");
  EXPECT_EQ(single[1].first, "batch");
  EXPECT_EQ(single[2].first, "optimizer");
  EXPECT_EQ(single[3].first, "lr");
  // <<: [*large, *defaults]: the earlier map in the list wins.
  EXPECT_EQ(*v.Find("exp_list.batch"), Value::Int(512));
  EXPECT_EQ(*v.Find("exp_list.layers"), Value::Int(48));
  EXPECT_EQ(*v.Find("exp_list.lr"), Value::Double(0.001));
  EXPECT_EQ(*v.Find("exp_list.name"), Value::String("list"));
  // A merged value still says where it was written.
  EXPECT_EQ(v.Find("exp_list.batch")->origin().Describe(), TestDataPath("anchors.yaml") + ":6:10");
  // Plain aliases.
  EXPECT_EQ(*v.Find("master_port"), Value::Int(29500));
  EXPECT_EQ(*v.Find("container_mounts"), *v.Find("mounts"));
}

TEST(YamlLoaderTest, MergeKeyErrors) {
  EXPECT_EQ(LoadError("bad_merge.yaml"),
            "testdata/bad_merge.yaml:3:7: invalid YAML: the referenced anchor is not defined");
  EXPECT_EQ(LoadError("merge_scalar.yaml"),
            "testdata/merge_scalar.yaml:3:3: the merge key '<<' expects a map or a list of maps, "
            "found a string ('plain')");
}

TEST(YamlLoaderTest, DuplicateKeysAreAnErrorAtTheSecondKey) {
  EXPECT_EQ(LoadError("duplicate_keys.yaml"),
            "testdata/duplicate_keys.yaml:4:3: duplicate key 'lr' in the same map (first at "
            "testdata/duplicate_keys.yaml:2:3)");
}

TEST(YamlLoaderTest, SyntaxErrorsCarryFileLineAndColumn) {
  EXPECT_EQ(LoadError("tab_indent.yaml"),
            "testdata/tab_indent.yaml:3:1: invalid YAML: illegal tab when looking for indentation");
  EXPECT_EQ(ErrorHint("tab_indent.yaml"),
            "line 3 is indented with a tab; YAML indentation must use spaces");
  // yaml-cpp itself would swallow the rest of the file into the string.
  EXPECT_EQ(LoadError("unclosed_quote.yaml"),
            "testdata/unclosed_quote.yaml:1:7: invalid YAML: this quoted string is never closed");
  EXPECT_EQ(ErrorHint("unclosed_quote.yaml"), "add the closing quote");
  EXPECT_EQ(LoadError("bad_indent.yaml"),
            "testdata/bad_indent.yaml:3:2: invalid YAML: end of map not found");
  // yaml-cpp reports an unclosed '[' at 1:1; we point at the '['.
  EXPECT_EQ(LoadError("unclosed_list.yaml"),
            "testdata/unclosed_list.yaml:2:9: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(ErrorHint("unclosed_list.yaml"), "close the list with ']'");
}

TEST(YamlLoaderTest, OneDocumentAndAMapAtTheTop) {
  EXPECT_EQ(LoadError("two_documents.yaml"),
            "testdata/two_documents.yaml:2:1: a second YAML document ('---') starts here; a "
            "configuration file holds one document");
  EXPECT_EQ(LoadError("top_level_list.yaml"),
            "testdata/top_level_list.yaml:1:1: expected a map of settings at the top level, found a list");
}

TEST(YamlLoaderTest, MissingFileNamesThePath) {
  Result<Value> value = LoadYamlFile(TestDataPath("no_such_file.yaml"), Environment());
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().code, ExitCode::kConfig);
  EXPECT_NE(value.error().message.find("no_such_file.yaml"), std::string::npos);
}

TEST(YamlLoaderTest, InterpolationDefaultsEscapesAndTyping) {
  Value v = Load("interpolation.yaml", Environment({{"DATA_ROOT", "/data"}}));
  EXPECT_EQ(*v.Find("data_dir"), Value::String("/data/c4"));
  EXPECT_EQ(*v.Find("lr"), Value::Double(0.001));     // plain: typed after interpolation
  EXPECT_EQ(*v.Find("steps"), Value::Int(100));
  EXPECT_EQ(*v.Find("name"), Value::String("run"));
  EXPECT_EQ(*v.Find("quoted_number"), Value::String("100"));  // quoted: stays a string
  EXPECT_TRUE(v.Find("empty_default")->IsNull());             // plain and empty: null
  EXPECT_EQ(*v.Find("quoted_empty_default"), Value::String(""));
  EXPECT_EQ(*v.Find("price"), Value::String("$5"));
  EXPECT_EQ(*v.Find("literal"), Value::String("${NOT_EXPANDED}"));
}

TEST(YamlLoaderTest, InterpolationUsesTheEnvironmentOverTheDefault) {
  Value v = Load("interpolation.yaml", Environment({{"DATA_ROOT", "/d"}, {"LR", "3e-4"}, {"STEPS", "7"}}));
  EXPECT_EQ(*v.Find("lr"), Value::Double(3e-4));
  EXPECT_EQ(*v.Find("steps"), Value::Int(7));
  EXPECT_EQ(*v.Find("quoted_number"), Value::String("7"));
}

TEST(YamlLoaderTest, MissingRequiredVariableIsLocatedWithAHint) {
  EXPECT_EQ(LoadError("interpolation.yaml"),
            "testdata/interpolation.yaml:1:11: environment variable DATA_ROOT is not set (needed by "
            "'${DATA_ROOT}')");
  EXPECT_EQ(ErrorHint("interpolation.yaml"),
            "export DATA_ROOT=... before running, or give a default: ${DATA_ROOT:default}");
}

TEST(YamlLoaderTest, ExtendsListMergesInOrderAndTheFileItselfWins) {
  Value v = Load("extends/exp.yaml");
  EXPECT_EQ(v.Find("extends"), nullptr);
  EXPECT_EQ(*v.Find("model.layers"), Value::Int(24));      // base, through mid
  EXPECT_EQ(*v.Find("model.hidden"), Value::Int(2048));    // mid over base
  EXPECT_EQ(*v.Find("model.dropout"), Value::Double(0.1));
  EXPECT_EQ(*v.Find("train.lr"), Value::Double(0.002));    // other.yaml, later in the list
  EXPECT_EQ(*v.Find("train.warmup"), Value::Int(100));
  EXPECT_EQ(*v.Find("train.steps"), Value::Int(5000));     // the file itself
  EXPECT_EQ(*v.Find("name"), Value::String("exp"));
  ASSERT_EQ(v.Find("tags")->AsList().size(), 1u);          // lists replace, not append
  EXPECT_EQ(v.Find("tags")->AsList()[0], Value::String("other"));
}

TEST(YamlLoaderTest, ValuesFromBasesRememberTheExtendsChain) {
  Value v = Load("extends/exp.yaml");
  std::string dir = TestDataPath("extends/");
  EXPECT_EQ(v.Find("model.layers")->origin().Describe(),
            dir + "base.yaml:2:11 (via " + dir + "mid.yaml <- " + dir + "exp.yaml)");
  EXPECT_EQ(v.Find("model.hidden")->origin().Describe(), dir + "mid.yaml:3:11 (via " + dir + "exp.yaml)");
  EXPECT_EQ(v.Find("train.steps")->origin().Describe(), dir + "exp.yaml:5:10");
}

TEST(YamlLoaderTest, ExtendsIsRelativeToTheIncludingFile) {
  Value v = Load("extends/sub/child.yaml");
  EXPECT_EQ(*v.Find("model.layers"), Value::Int(12));
  EXPECT_EQ(*v.Find("model.hidden"), Value::Int(1024));
  // The path is shown without "sub/..".
  EXPECT_EQ(v.Find("model.hidden")->origin().source, TestDataPath("extends/base.yaml"));
}

TEST(YamlLoaderTest, ExtendsFromAStringResolvesFromItsDisplayName) {
  Result<Value> v = LoadYamlString("extends: base.yaml\nmodel: {layers: 6}\n",
                                   TestDataPath("extends/inline.yaml"), Environment());
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v->Find("model.layers"), Value::Int(6));
  EXPECT_EQ(*v->Find("train.steps"), Value::Int(1000));
}

TEST(YamlLoaderTest, ExtendsPathsAreInterpolated) {
  Value v = Load("extends/interpolated.yaml", Environment({{"HIDDEN", "512"}}));
  EXPECT_EQ(*v.Find("model.hidden"), Value::Int(512));
  EXPECT_EQ(*v.Find("model.layers"), Value::Int(24));
}

TEST(YamlLoaderTest, ExtendsCycleNamesTheWholeCycle) {
  EXPECT_EQ(LoadError("extends/cycle_a.yaml"),
            "testdata/extends/cycle_b.yaml:1:10 (via testdata/extends/cycle_a.yaml): extends cycle: "
            "testdata/extends/cycle_a.yaml -> testdata/extends/cycle_b.yaml -> "
            "testdata/extends/cycle_a.yaml");
}

TEST(YamlLoaderTest, MissingExtendsFileIsLocatedAtTheEntryNamingIt) {
  EXPECT_EQ(LoadError("extends/missing_base.yaml"),
            "testdata/extends/missing_base.yaml:3:5: extends: cannot find 'does_not_exist.yaml' "
            "(looked for testdata/extends/does_not_exist.yaml)");
  EXPECT_EQ(LoadError("extends/nested_missing.yaml"),
            "testdata/extends/missing_base.yaml:3:5 (via testdata/extends/nested_missing.yaml): "
            "extends: cannot find 'does_not_exist.yaml' (looked for "
            "testdata/extends/does_not_exist.yaml)");
}

TEST(YamlLoaderTest, ErrorsInsideABaseShowTheChain) {
  EXPECT_EQ(LoadError("extends/uses_base_needs_env.yaml"),
            "testdata/extends/base_needs_env.yaml:2:11 (via testdata/extends/uses_base_needs_env.yaml): "
            "environment variable LAYERS is not set (needed by '${LAYERS}')");
}

TEST(YamlLoaderTest, ExtendsMustBePaths) {
  EXPECT_EQ(LoadError("extends/bad_extends.yaml"),
            "testdata/extends/bad_extends.yaml:1:10: extends: expected a file path or a list of "
            "paths, found a map");
}


TEST(YamlLoaderTest, DevicesAndOversizedFilesAreRefusedBeforeReading) {
  ScopedTempDir dir("loader");
  // Sparse: 64 MiB and one byte, nothing written.
  std::string big = dir.path() + "/big.yaml";
  ASSERT_TRUE(WriteFileAtomic(big, "").ok());
  ASSERT_EQ(::truncate(big.c_str(), static_cast<off_t>(kMaxConfigFileBytes) + 1), 0);
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "/dev/zero is a character device, not a regular file"},
      {"/dev/urandom", "/dev/urandom is a character device, not a regular file"},
      {dir.path(), dir.path() + " is a directory, not a regular file"},
      {big, big + " is 67108865 bytes, larger than the limit of 67108864 bytes for this input"},
  };
  for (const auto& [path, expected] : cases) {
    std::clock_t start = std::clock();  // CPU time: nothing is read
    Result<Value> value = LoadYamlFile(path, Environment());
    EXPECT_LT(std::clock() - start, CLOCKS_PER_SEC / 10) << path;
    ASSERT_FALSE(value.ok()) << path;
    EXPECT_EQ(value.error().code, ExitCode::kConfig);
    EXPECT_EQ(value.error().message, expected);
  }
}

TEST(YamlLoaderTest, ADeviceAsAnExtendsTargetIsLocatedAtItsEntry) {
  ScopedTempDir dir("loader");
  std::string file = dir.path() + "/exp.yaml";
  ASSERT_TRUE(WriteFileAtomic(file, "a: 1\nextends: [/dev/zero]\n").ok());
  Result<Value> value = LoadYamlFile(file, Environment());
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().code, ExitCode::kConfig);
  EXPECT_EQ(value.error().message, file + ":2:11: extends: /dev/zero is a character device, not a regular file");
}

}  // namespace
}  // namespace primus::config
