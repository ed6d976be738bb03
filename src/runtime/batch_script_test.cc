// The batch script's text. That sbatch reads it as intended (directives,
// quotes) is checked on a real cluster in tests/integration/slurm_test.cc.
#include "runtime/batch_script.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"
#include "io/subprocess.h"

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

// The script run by a real bash: a comment holding a line break (the
// command line that issue 16 injected through) stays a comment, and every
// argument of the body reaches the command byte for byte.
TEST(BatchScriptTest, NoArgumentBecomesShellCodeAndEveryByteArrives) {
  ScopedTempDir dir("batch");
  const std::vector<std::string> args = {"x\necho INJECTED > " + dir.path() + "/injected #",
                                         "import sys\nprint(1)", "cr\recho CR > " + dir.path() + "/cr",
                                         "esc\x1b[2J", "$(touch " + dir.path() + "/sub)", "`id`", "it's \"q\"",
                                         "\xff", "", "del\x7f"};
  BatchScript script;
  script.directives = {"--job-name=run"};
  script.comment_lines = {"for: primus-cli slurm sbatch -- run " + Join(args, " "), "raw\x1b[31m\rcomment"};
  script.command = {"printf", "%s\\0"};
  script.command.insert(script.command.end(), args.begin(), args.end());
  std::string text = RenderBatchScript(script);
  for (const std::string& line : Split(text, '\n')) {
    EXPECT_FALSE(HasControlCharacter(line)) << "a raw control character: " << line;
  }
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/sbatch.sh", text).ok());
  CommandOptions options;
  options.timeout_s = 10;
  auto run = RunCommand({"bash", dir.path() + "/sbatch.sh"}, options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 0) << run->err << text;
  std::string expected;
  for (const std::string& arg : args) expected += arg + std::string(1, '\0');
  EXPECT_EQ(run->out, expected) << text;
  for (const char* file : {"/injected", "/cr", "/sub"}) EXPECT_FALSE(PathExists(dir.path() + file)) << file << "\n" << text;
}

TEST(BatchScriptTest, ADirectiveCannotHoldALineBreak) {
  for (const std::string& bad : {std::string("--comment=x\nrm -rf /"), std::string("x\ry"), std::string("\x1b")}) {
    Result<std::vector<std::string>> directives = DirectivesFromFlags({"--comment", bad});
    ASSERT_FALSE(directives.ok()) << bad;
    EXPECT_EQ(directives.error().code, ExitCode::kUsage);
    EXPECT_NE(directives.error().message.find("control character"), std::string::npos) << directives.error().message;
    EXPECT_FALSE(HasControlCharacter(directives.error().message)) << "the message shows it escaped";
  }
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

TEST(BatchScriptTest, FlagValuesInEveryFormAndJobFilePatterns) {
  EXPECT_EQ(FlagValue({"-N", "2", "-o", "logs/a_%j.log"}, "--output", "-o"), "logs/a_%j.log");
  EXPECT_EQ(FlagValue({"-ologs/b.log"}, "--output", "-o"), "logs/b.log");
  EXPECT_EQ(FlagValue({"--output=c.log", "--output", "d.log"}, "--output", "-o"), "d.log") << "the last one wins";
  EXPECT_FALSE(FlagValue({"--open-mode=append", "-N", "1"}, "--output", "-o"));
  JobFileNames names{"42", "gpt", "ann", ""};
  EXPECT_EQ(ExpandJobFilePattern("logs/train_%j_%x.%%.log", names), "logs/train_42_gpt.%.log");
  EXPECT_EQ(ExpandJobFilePattern("%u/%A.out", {"7", "x", "ann", ""}), "ann/7.out");
  EXPECT_EQ(ExpandJobFilePattern("%J-%s-%n-%t-%a.out", names), "42.batch-batch-0-0-4294967294.out");
  EXPECT_EQ(ExpandJobFilePattern("job%6j.log", names), "job000042.log");
  EXPECT_EQ(ExpandJobFilePattern("raw\\%j.log", names), "raw%j.log") << "a backslash turns expansion off";
  EXPECT_FALSE(ExpandJobFilePattern("logs/%N.log", names)) << "the batch host is known once the job runs";
  EXPECT_EQ(ExpandJobFilePattern("logs/%N-%j.log", {"42", "gpt", "ann", "node7"}), "logs/node7-42.log");
  EXPECT_FALSE(ExpandJobFilePattern("trailing%", names));
  EXPECT_FALSE(ExpandJobFilePattern("%q.log", names));
}

}  // namespace
}  // namespace primus::runtime
