// The public Primus project's documented command lines, through the real
// binary: what each of its options means here, as a user notices it (the
// plan of --dry-run, the workers' environment and arguments, the files
// written, the exit code and message).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

class PrimusCompatTest : public ::testing::Test {
 protected:
  ProcessOptions Isolated() const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    options.env["NO_COLOR"] = "1";
    options.timeout_s = 120;
    for (const char* name : {"PRIMUS_LOG_LEVEL", "PET_NPROC_PER_NODE", "SLURM_JOB_ID", "PRIMUS_BENCHMARK_CORRUPT_RANK",
                             "GLOO_SOCKET_IFNAME", "OMP_NUM_THREADS", "NCCL_DEBUG", "HF_TOKEN", "FROM_FILE"}) {
      options.env[name] = std::nullopt;
    }
    return options;
  }
  ProcessResult Run(const std::vector<std::string>& args) const { return RunPrimus(args, Isolated()); }
  ProcessResult Run(const std::string& line) const { return Run(Split(line, ' ')); }
  std::string Read(const std::string& relative) const {
    auto text = ReadFile(dir_.path() + "/" + relative);
    return text.ok() ? *text : "";
  }
  TempDir dir_;
};

// ---- direct ----

TEST_F(PrimusCompatTest, SingleIsOneWorkerAndConflictsAreRefused) {
  ProcessResult one = Run({"direct", "--single", "--", "run", "/bin/sh", "-c", "echo world=$WORLD_SIZE local=$LOCAL_WORLD_SIZE"});
  ASSERT_EQ(one.exit_code, 0) << one.all();
  EXPECT_NE(one.out.find("world=1 local=1"), std::string::npos) << one.out;
  std::regex lines("world=");
  EXPECT_EQ(std::distance(std::sregex_iterator(one.out.begin(), one.out.end(), lines), std::sregex_iterator()), 1);

  ProcessResult plan = Run("--dry-run direct --single -- run true");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("direct.nproc_per_node          1                              flag --single"), std::string::npos)
      << plan.out;

  ProcessResult conflict = Run("direct --single --nproc-per-node 2 -- run true");
  EXPECT_EQ(conflict.exit_code, 2) << conflict.all();
  EXPECT_NE(conflict.err.find("--single runs one worker on this node alone, but --nproc-per-node 2 asks for more"),
            std::string::npos)
      << conflict.err;
}

TEST_F(PrimusCompatTest, ScriptRunsAsEachWorkerWithTheArgumentsAfterTheSeparator) {
  dir_.Write("debug_run.py", "import os, sys\nprint('script rank', os.environ['RANK'], 'args', ' '.join(sys.argv[1:]))\n");
  ProcessResult two = Run("direct --nproc-per-node 2 --script debug_run.py -- --arg1 val1");
  ASSERT_EQ(two.exit_code, 0) << two.all();
  EXPECT_NE(two.out.find("script rank 0 args --arg1 val1"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("script rank 1 args --arg1 val1"), std::string::npos) << two.out;

  ProcessResult single = Run("direct --single --script debug_run.py -- train pretrain --config exp.yaml");
  ASSERT_EQ(single.exit_code, 0) << single.all();
  EXPECT_NE(single.out.find("script rank 0 args train pretrain --config exp.yaml"), std::string::npos) << single.out;
  EXPECT_EQ(single.out.find("script rank 1"), std::string::npos);

  ProcessResult plan = Run("--dry-run direct --script debug_run.py -- --arg1 val1");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_NE(plan.out.find("note: direct --script debug_run.py: the task is `run python3 debug_run.py`"), std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find("task arguments: python3 debug_run.py --arg1 val1"), std::string::npos) << plan.out;
}

TEST_F(PrimusCompatTest, NumaAndNoNumaSetTheBinding) {
  ProcessResult on = Run("--dry-run direct --numa -- run true");
  ASSERT_EQ(on.exit_code, 0) << on.all();
  EXPECT_NE(on.out.find("direct.numa_bind               true                           flag --numa"), std::string::npos)
      << on.out;
  EXPECT_NE(on.out.find("cpu binding (--numa-bind):"), std::string::npos) << on.out;
  ProcessResult off = Run("--dry-run --set direct.numa_bind=true direct --no-numa -- run true");
  ASSERT_EQ(off.exit_code, 0) << off.all();
  EXPECT_NE(off.out.find("direct.numa_bind               false                          flag --no-numa"), std::string::npos)
      << off.out;
  EXPECT_EQ(off.out.find("cpu binding"), std::string::npos) << off.out;
}

TEST_F(PrimusCompatTest, EnvFileSetsVariablesBelowExplicitOnesAndItsSecretsStayHidden) {
  dir_.Write("cluster.env", "# site settings\nexport NCCL_DEBUG=INFO\nFROM_FILE='kept $literally'\nHF_TOKEN=hf_filesecret123\n");
  ProcessResult run = Run({"direct", "--env", "NCCL_DEBUG=WARN", "--env", "cluster.env", "--", "run", "/bin/sh", "-c",
                           "echo \"debug=$NCCL_DEBUG file=$FROM_FILE token_set=${HF_TOKEN:+yes}\""});
  ASSERT_EQ(run.exit_code, 0) << run.all();
  EXPECT_NE(run.out.find("debug=WARN file=kept $literally token_set=yes"), std::string::npos) << run.all();

  ProcessResult plan = Run("--dry-run direct --env cluster.env --env NCCL_DEBUG=WARN -- run true");
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_EQ(plan.all().find("hf_filesecret123"), std::string::npos) << plan.all();
  EXPECT_NE(plan.out.find("HF_TOKEN=<redacted>"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("flag --env cluster.env:3"), std::string::npos) << "each value names its line: " << plan.out;
  EXPECT_NE(plan.out.find("NCCL_DEBUG=WARN                flag --env\n"), std::string::npos) << plan.out;

  dir_.Write("bad.env", "A=1\nB = 2\n");
  ProcessResult bad = Run("direct --env bad.env -- run true");
  EXPECT_EQ(bad.exit_code, 3) << bad.all();
  EXPECT_NE(bad.err.find("bad.env:2: no spaces are allowed before '='"), std::string::npos) << bad.err;
  ProcessResult missing = Run("direct --env NOT_A_FILE -- run true");
  EXPECT_EQ(missing.exit_code, 2) << missing.all();
  EXPECT_NE(missing.err.find("--env 'NOT_A_FILE': neither NAME=VALUE nor a file that exists"), std::string::npos)
      << missing.err;
}

TEST_F(PrimusCompatTest, LogFileGetsEverythingPrintedAndNothingUnderDryRun) {
  ProcessResult dry = Run("--dry-run direct --log_file logs/run.log -- run true");
  ASSERT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("log file: logs/run.log would receive a copy of everything printed"), std::string::npos);
  EXPECT_FALSE(PathExists(dir_.path() + "/logs"));

  ProcessResult run = Run({"direct", "--nproc-per-node", "2", "--log_file", "logs/run.log", "--", "run", "/bin/sh", "-c",
                           "echo out of rank $RANK; echo err of rank $RANK >&2; exit $RANK"});
  EXPECT_EQ(run.exit_code, 1) << run.all();
  EXPECT_NE(run.out.find("out of rank 0"), std::string::npos) << "the terminal keeps its output: " << run.all();
  std::string log = Read("logs/run.log");
  for (const char* text : {"out of rank 0", "out of rank 1", "err of rank 1", "[INFO]", "[ERROR]"}) {
    EXPECT_NE(log.find(text), std::string::npos) << text << " in:\n" << log;
  }
  EXPECT_EQ(log.find("\033["), std::string::npos) << "no colour codes in the file";
}

TEST_F(PrimusCompatTest, HelpAfterTheSeparatorListsTheTasks) {
  ProcessResult help = Run("direct -- --help");
  EXPECT_EQ(help.exit_code, 0) << help.all();
  for (const char* text : {"tasks (what runs after '--')", "benchmark", "preflight", "train", "direct -- <task> --help"}) {
    EXPECT_NE(help.out.find(text), std::string::npos) << text << " in:\n" << help.out;
  }
}

}  // namespace
}  // namespace primus::testing
