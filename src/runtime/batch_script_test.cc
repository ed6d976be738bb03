// The batch script's text. That sbatch reads it as intended (directives,
// quotes) is checked on a real cluster in tests/integration/slurm_test.cc.
#include "runtime/batch_script.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

TEST(BatchScriptTest, DirectivesFirstThenCommentsThenTheCommand) {
  BatchScript script;
  script.directives = {"--job-name=run", "--nodes=2", "--output=/w/run_1/logs/slurm-%j.out"};
  script.comment_lines = {"Written by primus-cli", "", "second paragraph"};
  script.command = {"/opt/primus-cli", "slurm", "srun", "--", "direct", "--", "run", "echo", "a b"};
  EXPECT_EQ(RenderBatchScript(script),
            "#!/bin/bash\n"
            "#SBATCH --job-name=run\n"
            "#SBATCH --nodes=2\n"
            "#SBATCH --output=/w/run_1/logs/slurm-%j.out\n"
            "# Written by primus-cli\n"
            "#\n"
            "# second paragraph\n"
            "exec /opt/primus-cli slurm srun -- direct -- run echo 'a b'\n");
}

TEST(BatchScriptTest, PassThroughFlagsBecomeOneDirectiveEach) {
  Result<std::vector<std::string>> directives =
      DirectivesFromFlags({"--exclusive", "--mem", "4G", "-w", "node[1-2]", "--comment=two words", "--job-name", "a b"});
  ASSERT_TRUE(directives.ok());
  EXPECT_EQ(*directives, (std::vector<std::string>{"--exclusive", "--mem 4G", "-w 'node[1-2]'", "'--comment=two words'",
                                                    "--job-name 'a b'"}));
  Result<std::vector<std::string>> stray = DirectivesFromFlags({"stray", "--exclusive"});
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.error().code, ExitCode::kUsage);
  EXPECT_NE(stray.error().message.find("'stray' for 'slurm sbatch'"), std::string::npos) << stray.error().message;
  Result<std::vector<std::string>> srun_stray = DirectivesFromFlags({"hostname"}, "srun");
  ASSERT_FALSE(srun_stray.ok());
  EXPECT_NE(srun_stray.error().message.find("'hostname' for 'slurm srun'"), std::string::npos);
}

TEST(BatchScriptTest, FindsFlagsInAnySpelling) {
  std::vector<std::string> flags = {"--exclusive", "-o", "x.log", "--job-name=j"};
  EXPECT_TRUE(HasFlag(flags, "--output", "-o"));
  EXPECT_TRUE(HasFlag(flags, "--job-name", "-J"));
  EXPECT_TRUE(HasFlag({"-Jname"}, "--job-name", "-J"));
  EXPECT_TRUE(HasFlag({"--output=/x"}, "--output", "-o"));
  EXPECT_FALSE(HasFlag(flags, "--error", "-e"));
  EXPECT_FALSE(HasFlag({"--outputs"}, "--output", ""));
}

}  // namespace
}  // namespace primus::runtime
