#include "config/env_file.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::config {
namespace {

TEST(EnvFileTest, ShellAssignmentsCommentsAndQuotes) {
  auto entries = ParseEnvFile(
      "# tuning for the cluster\n"
      "\n"
      "NCCL_DEBUG=INFO\n"
      "export HF_HOME=/data/hf\r\n"
      "  MSG=\"two \\\"words\\\" \\$5\"   # note\n"
      "PATTERN='a$b c'\n"
      "EMPTY=\n"
      "JOINED=a'b c'\"d\"\n"
      "NCCL_DEBUG=WARN\n",
      "vars.env");
  ASSERT_TRUE(entries.ok()) << entries.error().Format();
  ASSERT_EQ(entries->size(), 7u);
  EXPECT_EQ((*entries)[0].name, "NCCL_DEBUG");
  EXPECT_EQ((*entries)[0].value, "INFO");
  EXPECT_EQ((*entries)[0].line, 3);
  EXPECT_EQ((*entries)[1].name, "HF_HOME");
  EXPECT_EQ((*entries)[1].value, "/data/hf");
  EXPECT_EQ((*entries)[2].value, "two \"words\" $5");
  EXPECT_EQ((*entries)[3].value, "a$b c");
  EXPECT_EQ((*entries)[4].value, "");
  EXPECT_EQ((*entries)[5].value, "ab cd");
  EXPECT_EQ((*entries)[6].value, "WARN") << "a later line wins, as in a shell";
  EXPECT_EQ((*entries)[6].line, 9);
}

TEST(EnvFileTest, BadLinesNameFileAndLine) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {Case{"A=1\nnot an assignment\n", "vars.env:2: 'not' has no '=VALUE'"},
                        Case{"A=1\nB\n", "vars.env:2: 'B' has no '=VALUE'"},
                        Case{"A = 1\n", "vars.env:1: no spaces are allowed before '='"},
                        Case{"A=two words\n", "vars.env:1: unexpected text after the value of A"},
                        Case{"A=$HOME/x\n", "vars.env:1: 'A=$HOME/x' asks the shell to expand"},
                        Case{"A=\"${B}\"\n", "vars.env:1:"},
                        Case{"A=`id`\n", "asks the shell to expand"},
                        Case{"A='open\n", "vars.env:1: a single quote is not closed"},
                        Case{"A=x;rm -rf /\n", "';' in a value must be quoted"},
                        Case{"1A=x\n", "vars.env:1: a line must start with a variable name"}}) {
    auto entries = ParseEnvFile(c.text, "vars.env");
    ASSERT_FALSE(entries.ok()) << c.text;
    EXPECT_EQ(entries.error().code, ExitCode::kConfig) << c.text;
    EXPECT_NE(entries.error().message.find(c.message), std::string::npos) << entries.error().message;
    EXPECT_FALSE(entries.error().hint.empty());
  }
}

TEST(EnvFileTest, ReadsARegularFileOnly) {
  ScopedTempDir dir("envfile");
  std::string path = dir.path() + "/vars.env";
  ASSERT_TRUE(WriteFileAtomic(path, "HF_TOKEN=hf_abc\n").ok());
  auto entries = ReadEnvFile(path);
  ASSERT_TRUE(entries.ok()) << entries.error().Format();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].value, "hf_abc");
  auto directory = ReadEnvFile(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, ExitCode::kConfig);
}

}  // namespace
}  // namespace primus::config
