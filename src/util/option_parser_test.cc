#include "util/option_parser.h"

#include <gtest/gtest.h>

namespace primus {
namespace {

const std::vector<OptionSpec> kTable = {
    {{"--nproc-per-node"}, OptionSpec::Kind::kValue, "N", "direct.nproc_per_node", "workers per node"},
    {{"--nodes", "-N"}, OptionSpec::Kind::kValue, "N", "slurm.nodes", "nodes"},
    {{"--debug"}, OptionSpec::Kind::kFlag, "", "main.debug", "debug"},
    {{"--env"}, OptionSpec::Kind::kKeyValue, "K=V", "direct.env", "env", true},
};

std::vector<const std::vector<OptionSpec>*> Tables() { return {&kTable}; }

TEST(OptionParserTest, LongShortAttachedAndUnderscoreForms) {
  std::vector<std::string> tokens = {"--nproc_per_node=4", "-N8", "--debug", "--env", "A=1", "--", "train"};
  auto parsed = ParseOptions(tokens, 0, Tables(), UnknownOptionPolicy::kReject, "mode 'direct'");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Format();
  ASSERT_EQ(parsed->options.size(), 4u);
  EXPECT_EQ(parsed->options[0].value, "4");
  EXPECT_EQ(parsed->options[0].spec->config_key, "direct.nproc_per_node");
  EXPECT_EQ(parsed->options[1].value, "8");
  EXPECT_EQ(parsed->options[1].written, "-N");
  EXPECT_EQ(parsed->options[2].value, "true");
  EXPECT_EQ(parsed->options[3].value, "A=1");
  EXPECT_TRUE(parsed->stopped_at_separator);
  EXPECT_EQ(tokens[parsed->next], "train");
}

TEST(OptionParserTest, UnknownFlagIsRejectedWithSuggestion) {
  auto parsed = ParseOptions({"--nproc-per-nod", "2"}, 0, Tables(), UnknownOptionPolicy::kReject, "mode 'direct'");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ExitCode::kUsage);
  EXPECT_NE(parsed.error().message.find("unknown option --nproc-per-nod for mode 'direct'"), std::string::npos);
  EXPECT_NE(parsed.error().message.find("did you mean '--nproc-per-node'"), std::string::npos);
}

TEST(OptionParserTest, PassThroughKeepsUnknownTokensInOrder) {
  std::vector<std::string> tokens = {"-N", "2", "-p", "gpu-test", "--job-name=x", "-o", "logs/%j.log", "--", "container"};
  auto parsed = ParseOptions(tokens, 0, Tables(), UnknownOptionPolicy::kPassThrough, "slurm srun");
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->options.size(), 1u);
  EXPECT_EQ(parsed->options[0].value, "2");
  EXPECT_EQ(parsed->passthrough, (std::vector<std::string>{"-p", "gpu-test", "--job-name=x", "-o", "logs/%j.log"}));
  EXPECT_EQ(tokens[parsed->next], "container");
}

TEST(OptionParserTest, MissingValueNamesTheFlag) {
  auto parsed = ParseOptions({"--nproc-per-node"}, 0, Tables(), UnknownOptionPolicy::kReject, "mode 'direct'");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("--nproc-per-node needs a value (N)"), std::string::npos);
  auto before_separator = ParseOptions({"--nproc-per-node", "--", "run"}, 0, Tables(), UnknownOptionPolicy::kReject, "x");
  EXPECT_FALSE(before_separator.ok());
}

TEST(OptionParserTest, SwitchRejectsNonBooleanValue) {
  EXPECT_FALSE(ParseOptions({"--debug=maybe"}, 0, Tables(), UnknownOptionPolicy::kReject, "x").ok());
  auto parsed = ParseOptions({"--debug=false"}, 0, Tables(), UnknownOptionPolicy::kReject, "x");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->options[0].value, "false");
}

TEST(OptionParserTest, NegatingSwitchRecordsFalse) {
  const std::vector<OptionSpec> table = {
      {{"--numa-bind", "--numa"}, OptionSpec::Kind::kFlag, "", "direct.numa_bind", "bind"},
      {{"--no-numa"}, OptionSpec::Kind::kFlag, "", "direct.numa_bind", "do not bind", false, /*negates=*/true},
  };
  auto parsed = ParseOptions({"--numa", "--no-numa", "--no_numa=false"}, 0, {&table}, UnknownOptionPolicy::kReject, "x");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Format();
  ASSERT_EQ(parsed->options.size(), 3u);
  EXPECT_EQ(parsed->options[0].value, "true");
  EXPECT_EQ(parsed->options[0].spec->config_key, "direct.numa_bind");
  EXPECT_EQ(parsed->options[1].value, "false");
  EXPECT_EQ(parsed->options[2].value, "true") << "--no-numa=false turns binding on";
}

TEST(OptionParserTest, RejectPolicyStopsAtPositional) {
  std::vector<std::string> tokens = {"--debug", "train", "pretrain"};
  auto parsed = ParseOptions(tokens, 0, Tables(), UnknownOptionPolicy::kReject, "x");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->next, 1u);
  EXPECT_FALSE(parsed->stopped_at_separator);
}

TEST(OptionParserTest, HelpListsNamesAndValues) {
  std::string help = FormatOptionHelp(kTable);
  EXPECT_NE(help.find("--nodes, -N N"), std::string::npos);
  EXPECT_NE(help.find("(repeatable)"), std::string::npos);
}

}  // namespace
}  // namespace primus

namespace primus {
namespace {

TEST(OptionParserTest, CountOptionNamesTheFlagAsWritten) {
  OptionSpec spec{{"--iters", "-n"}, OptionSpec::Kind::kValue, "N", "", "iterations"};
  ParsedOption ok{&spec, "-n", "20"};
  ASSERT_TRUE(CountOption(ok, 1).ok());
  EXPECT_EQ(*CountOption(ok, 1), 20);
  for (const char* bad : {"0", "1000001", "x", "-3", ""}) {
    ParsedOption option{&spec, "-n", bad};
    auto count = CountOption(option, 1);
    ASSERT_FALSE(count.ok()) << bad;
    EXPECT_EQ(count.error().code, ExitCode::kUsage);
    EXPECT_EQ(count.error().message, std::string("option -n must be a count from 1 to 1000000, not '") + bad + "'");
  }
  ParsedOption zero{&spec, "--iters", "0"};
  EXPECT_TRUE(CountOption(zero, 0).ok());
}

}  // namespace
}  // namespace primus
