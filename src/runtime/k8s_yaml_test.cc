// ToYaml read back by yaml-cpp: every awkward string survives as the same
// string, and the ones a YAML 1.1 reader (kubectl's) would take for a number,
// a boolean or null are quoted; numbers and booleans stay what they are.
#include "runtime/k8s_yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "util/strings.h"

namespace primus::runtime {
namespace {

using Json = nlohmann::ordered_json;

// Control characters, DEL, C1 controls and direction overrides: escaped in
// the text (no raw control byte in the file, which a YAML reader refuses or
// reads as a line break) and read back as the same string; comments too.
TEST(K8sYamlTest, ControlCharactersAreEscapedAndReadBackExactly) {
  const std::vector<std::string> texts = {"x\necho INJECTED #", "cr\rkind: Secret", "esc\x1b[2J", "del\x7f",
                                          "\xc2\x9b" "31m", "\xe2\x80\xae" "rtl", "nul-free \x01\x1f", "ünï",
                                          "import sys\nprint(1)", "$(id) `id` 'q' \"q\""};
  for (const std::string& text : texts) {
    SCOPED_TRACE("[" + text + "]");
    std::string yaml = ToYamlDocuments({Json{{"args", Json::array({text})}}}, "Each pod runs: " + text);
    for (const std::string& line : Split(yaml, '\n')) EXPECT_FALSE(HasControlCharacter(line)) << line;
    std::vector<YAML::Node> documents = YAML::LoadAll(yaml);
    ASSERT_EQ(documents.size(), 1u) << yaml;
    ASSERT_EQ(documents[0].size(), 1u) << "nothing but args: " << yaml;
    EXPECT_EQ(documents[0]["args"][0].as<std::string>(), text) << yaml;
  }
}

TEST(K8sYamlTest, AwkwardStringsSurviveAsStrings) {
  const std::vector<std::string> texts = {
      "8", "0755", "1e3", "0x1F", "-1", "3.14", ".inf", "yes", "No", "ON", "off", "y", "n", "true", "False",
      "null", "~", "", " ", "--", "-", "---", "a b", "say \"hi\"", "it's", "key: value", "#not a comment",
      "multi\nline", "tab\there", "back\\slash", "*alias", "&anchor", "!tag", "[x]", "{y}", "%percent",
      "@at", "`tick`", "ünïcödé", "print('a b')", "--lr=1e-3", "$HOME", "a,b", "?q", "|pipe", ">gt"};
  for (const std::string& text : texts) {
    SCOPED_TRACE("[" + text + "]");
    std::string yaml = ToYaml(Json{{"value", text}, {"list", Json::array({text})}});
    YAML::Node node = YAML::Load(yaml);
    ASSERT_TRUE(node["value"].IsScalar()) << yaml;
    EXPECT_EQ(node["value"].as<std::string>(), text) << yaml;
    EXPECT_EQ(node["list"][0].as<std::string>(), text) << yaml;
    if (!IsPlainSafe(text)) {
      EXPECT_EQ(node["value"].Tag(), "!") << "not quoted: " << yaml;
    }
  }
}

TEST(K8sYamlTest, OrdinaryNamesStayPlain) {
  for (const char* text : {"primus-cli", "/usr/bin/python3", "amd.com/gpu", "train-0.train", "Indexed", "batch/v1"}) {
    EXPECT_TRUE(IsPlainSafe(text)) << text;
    YAML::Node node = YAML::Load(ToYaml(Json{{"v", text}}));
    EXPECT_EQ(node["v"].Tag(), "?") << text;
  }
  for (const char* text : {"8", "yes", "Null", "", "-x", "a b", "1abc"}) EXPECT_FALSE(IsPlainSafe(text)) << text;
}

TEST(K8sYamlTest, NumbersAndBooleansKeepTheirTypes) {
  YAML::Node node = YAML::Load(ToYaml(Json{{"completions", 2}, {"hostNetwork", true}, {"empty", Json::array()}}));
  EXPECT_EQ(node["completions"].Tag(), "?");
  EXPECT_EQ(node["completions"].as<int>(), 2);
  EXPECT_TRUE(node["hostNetwork"].as<bool>());
  EXPECT_TRUE(node["empty"].IsSequence());
  EXPECT_EQ(node["empty"].size(), 0u);
}

TEST(K8sYamlTest, KeysKeepTheirOrder) {
  std::string yaml = ToYaml(Json{{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", {{"name", "x"}}}});
  EXPECT_LT(yaml.find("apiVersion"), yaml.find("kind"));
  EXPECT_LT(yaml.find("kind"), yaml.find("metadata"));
}

TEST(K8sYamlTest, DocumentsAfterACommentHeader) {
  std::string text = ToYamlDocuments({Json{{"kind", "Service"}}, Json{{"kind", "Job"}}}, "line one\nline two");
  EXPECT_TRUE(text.starts_with("# line one\n# line two\n---\n")) << text;
  std::vector<YAML::Node> documents = YAML::LoadAll(text);
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents[0]["kind"].as<std::string>(), "Service");
  EXPECT_EQ(documents[1]["kind"].as<std::string>(), "Job");
}

}  // namespace
}  // namespace primus::runtime
