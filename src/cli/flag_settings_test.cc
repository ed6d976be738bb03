#include "cli/flag_settings.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

Result<std::vector<config::FlagSetting>> Settings(const std::string& line) {
  auto command = ParseCommandLine(Split(line, ' '));
  EXPECT_TRUE(command.ok()) << line;
  if (!command.ok()) return command.error();
  return FlagSettings(*command);
}

// "key value flag" per setting.
std::vector<std::string> Describe(const std::vector<config::FlagSetting>& settings) {
  std::vector<std::string> out;
  for (const auto& s : settings) out.push_back(s.key + " " + Join(s.values, ",") + " " + s.flag);
  return out;
}

TEST(FlagSettingsTest, FlagsInCommandLineOrder) {
  auto settings = Settings("--debug direct --nnodes 2 --numa --no-numa -- run true");
  ASSERT_TRUE(settings.ok()) << settings.error().Format();
  EXPECT_EQ(Describe(*settings), (std::vector<std::string>{"main.debug true --debug", "direct.nnodes 2 --nnodes",
                                                           "direct.numa_bind true --numa",
                                                           "direct.numa_bind false --no-numa"}));
}

// torchrun's elastic form: MIN:MAX is the fewest and the most nodes.
TEST(FlagSettingsTest, NnodesMinColonMaxIsAnElasticRange) {
  auto settings = Settings("direct --nnodes 2:4 --rendezvous c10d -- run true");
  ASSERT_TRUE(settings.ok()) << settings.error().Format();
  EXPECT_EQ(Describe(*settings), (std::vector<std::string>{"direct.min_nnodes 2 --nnodes", "direct.nnodes 4 --nnodes",
                                                           "direct.rendezvous c10d --rendezvous"}));
}

TEST(FlagSettingsTest, SingleIsOneWorkerOnThisNodeAlone) {
  auto settings = Settings("direct --single -- benchmark gemm");
  ASSERT_TRUE(settings.ok()) << settings.error().Format();
  EXPECT_EQ(Describe(*settings), (std::vector<std::string>{"direct.nproc_per_node 1 --single", "direct.nnodes 1 --single",
                                                           "direct.node_rank 0 --single"}));
  EXPECT_TRUE(Settings("direct --single --nproc-per-node 1 -- run true").ok()) << "saying the same twice is fine";
  auto conflict = Settings("direct --nproc_per_node 4 --single -- run true");
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, ExitCode::kUsage);
  EXPECT_NE(conflict.error().message.find("--single runs one worker on this node alone, but --nproc_per_node 4 asks for more"),
            std::string::npos)
      << conflict.error().message;
  EXPECT_FALSE(Settings("direct --single --nnodes 2 -- run true").ok());
}

TEST(FlagSettingsTest, EnvFileLinesComeFirstSoExplicitValuesWin) {
  ScopedTempDir dir("flags");
  std::string file = dir.path() + "/vars.env";
  ASSERT_TRUE(WriteFileAtomic(file, "# cluster\nNCCL_DEBUG=INFO\nHF_TOKEN=hf_secret\n").ok());
  auto settings = Settings("direct --env NCCL_DEBUG=WARN --env " + file + " -- run true");
  ASSERT_TRUE(settings.ok()) << settings.error().Format();
  EXPECT_EQ(Describe(*settings),
            (std::vector<std::string>{"direct.env NCCL_DEBUG=INFO --env " + file + ":2",
                                      "direct.env HF_TOKEN=hf_secret --env " + file + ":3",
                                      "direct.env NCCL_DEBUG=WARN --env"}))
      << "the file's NCCL_DEBUG is applied first, so the explicit one wins";
}

TEST(FlagSettingsTest, EnvValueThatIsNeitherAssignmentNorFile) {
  auto missing = Settings("direct --env NO_SUCH_FILE -- run true");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);
  EXPECT_NE(missing.error().message.find("--env 'NO_SUCH_FILE': neither NAME=VALUE nor a file that exists"), std::string::npos);
  ScopedTempDir dir("flags");
  std::string file = dir.path() + "/bad.env";
  ASSERT_TRUE(WriteFileAtomic(file, "A=1\nB = 2\n").ok());
  auto bad = Settings("direct --env " + file + " -- run true");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kConfig);
  EXPECT_NE(bad.error().message.find(file + ":2:"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace primus::cli
