// The srun command line and its parts, from a launch and a real layered
// launcher configuration (files, --set, flags).
#include "runtime/slurm_command_line.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

// The slurm mode's own table, as the slurm runtime declares it.
const std::vector<OptionSpec>& SlurmOptions() { return RuntimeRegistry::Global().Find("slurm")->options(); }

config::LauncherConfig Load(const config::LauncherSources& sources) {
  Result<config::LauncherConfig> config = config::LoadLauncherConfig(sources);
  EXPECT_TRUE(config.ok()) << config.error().Format();
  return config.ok() ? *config : config::LauncherConfig(config::Value(), {});
}

TEST(SlurmCommandLineTest, FlagsFromEverySlurmKeyInOrder) {
  config::LauncherSources sources;
  sources.set_assignments = {"slurm.qos=high", "slurm.options=[--exclusive, --mem=0]"};
  sources.flags = {{"slurm.nodes", {"4"}, "-N"},         {"slurm.time", {"1:00:00"}, "-t"},
                   {"slurm.partition", {"gpu"}, "-p"},   {"slurm.account", {"proj"}, "-A"},
                   {"slurm.reservation", {"r1"}, "--reservation"}, {"slurm.gpus_per_node", {"8"}, "--gpus-per-node"}};
  EXPECT_EQ(*SlurmFlagsFromConfig(Load(sources), false),
            (std::vector<std::string>{"--nodes=4", "--partition=gpu", "--account=proj", "--time=1:00:00", "--qos=high",
                                      "--reservation=r1", "--gpus-per-node=8", "--exclusive", "--mem=0"}));
  EXPECT_TRUE(SlurmFlagsFromConfig(Load({}), false)->empty()) << "defaults: 0 nodes, no partition ... ask for nothing";
}

TEST(SlurmCommandLineTest, InsideAnAllocationOnlyExplicitValuesApply) {
  ScopedTempDir dir("slurm-cmd");
  std::string file = dir.path() + "/project.yaml";
  ASSERT_TRUE(WriteFileAtomic(file, "slurm:\n  partition: prod\n  time: '4:00:00'\n  options: [--exclusive]\n").ok());
  config::LauncherSources sources;
  sources.project_file = file;
  sources.environment = Environment({{"PRIMUS_SLURM_QOS", "low"}});
  sources.flags = {{"slurm.nodes", {"2"}, "-N"}};
  config::LauncherConfig launcher = Load(sources);
  EXPECT_EQ(*SlurmFlagsFromConfig(launcher, false),
            (std::vector<std::string>{"--nodes=2", "--partition=prod", "--time=4:00:00", "--qos=low", "--exclusive"}));
  EXPECT_EQ(*SlurmFlagsFromConfig(launcher, true), (std::vector<std::string>{"--nodes=2", "--qos=low"}));
}

TEST(SlurmCommandLineTest, ANodeRangeGoesToSlurmAsWritten) {
  config::LauncherSources sources;
  sources.flags = {{"slurm.nodes", {"2-4"}, "--nodes"}};
  EXPECT_EQ(*SlurmFlagsFromConfig(Load(sources), false), (std::vector<std::string>{"--nodes=2-4"}));
  sources.flags = {{"slurm.nodes", {"4-2"}, "-N"}};
  Result<std::vector<std::string>> reversed = SlurmFlagsFromConfig(Load(sources), false);
  ASSERT_FALSE(reversed.ok());
  EXPECT_EQ(reversed.error().code, ExitCode::kConfig);
  EXPECT_EQ(reversed.error().message.rfind("flag -N: slurm.nodes '4-2'", 0), 0u) << reversed.error().message;
  // A file's integer still reads as a count.
  sources.flags.clear();
  sources.set_assignments = {"slurm.nodes=8"};
  EXPECT_EQ(*SlurmFlagsFromConfig(Load(sources), false), (std::vector<std::string>{"--nodes=8"}));
}

// --log-file is written here, from srun's output: the nodes never write it again.
TEST(SlurmCommandLineTest, GlobalOptionsTravelButDryRunAndLogFileDoNot) {
  Invocation invocation;
  invocation.chain = {ModeInvocation{"slurm", "srun", {}, {"--job-name", "x"},
                                 {"-N", "2", "--log-level=debug", "--job-name", "x", "--debug"}}};
  RuntimeContext context;
  context.invocation = &invocation;
  context.command_line = {"primus-cli", "--config", "c.yaml", "--dry-run", "--log-file", "job.log", "--set",
                          "direct.max_restarts=2", "-q", "slurm", "srun", "-N", "2", "--log-level=debug",
                          "--job-name", "x", "--debug", "--", "run", "true"};
  EXPECT_EQ(GlobalArguments(context, SlurmOptions()),
            (std::vector<std::string>{"--config", "c.yaml", "--set", "direct.max_restarts=2", "-q", "--log-level",
                                      "debug", "--debug"}));
}

TEST(SlurmCommandLineTest, InnerLaunchIsDirectUnlessTheUserChoseModes) {
  Invocation bare;
  bare.chain = {ModeInvocation{"slurm", "srun", {}, {}, {}}};
  bare.task = "run";
  bare.task_args = {"python3", "-c", "print(1)"};
  EXPECT_EQ(InnerCommand(bare, 0), (std::vector<std::string>{"direct", "--", "run", "python3", "-c", "print(1)"}));

  Invocation nested;
  nested.chain = {ModeInvocation{"slurm", "sbatch", {}, {}, {"-N", "2"}},
                  ModeInvocation{"container", "", {}, {}, {"--image", "img", "--ipc=host"}},
                  ModeInvocation{"direct", "", {}, {}, {"--nproc-per-node", "8"}}};
  nested.task = "train";
  nested.task_args = {"pretrain", "--config", "exp.yaml"};
  EXPECT_EQ(InnerCommand(nested, 0),
            (std::vector<std::string>{"container", "--image", "img", "--ipc=host", "--", "direct", "--nproc-per-node",
                                      "8", "--", "train", "pretrain", "--config", "exp.yaml"}));
}

TEST(SlurmCommandLineTest, SrunRunsOneAgentPerNodeWithPassThroughInOrder) {
  EXPECT_EQ(SrunCommand({"--nodes=2", "--partition=gpu"}, {"--exclusive", "-w", "node[1-2]"},
                        {"/opt/primus-cli", "direct", "--", "run", "true"}),
            (std::vector<std::string>{"srun", "--ntasks-per-node=1", "--kill-on-bad-exit=1", "--nodes=2",
                                      "--partition=gpu", "--exclusive", "-w", "node[1-2]", "/opt/primus-cli", "direct",
                                      "--", "run", "true"}));
}

}  // namespace
}  // namespace primus::runtime
