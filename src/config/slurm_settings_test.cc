// DetectSlurm on environments recorded from a real Slurm 22.05 cluster
// (testdata/slurm/*.env: `env | grep ^SLURM` in srun steps, batch scripts,
// an salloc shell; tests/support/slurm_cluster.h starts such a cluster).
#include "config/slurm_settings.h"

#include <gtest/gtest.h>

#include <ctime>
#include <map>

#include "config/scheduler_settings.h"
#include "config/testdata_path.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::config {
namespace {

Environment Recorded(const std::string& name) {
  Result<std::string> text = ReadFile(TestDataPath("slurm/" + name + ".env"));
  EXPECT_TRUE(text.ok()) << name;
  Environment variables;
  if (!text.ok()) return variables;
  for (const std::string& line : Split(*text, '\n')) {
    size_t equals = line.find('=');
    if (equals != std::string::npos) variables[line.substr(0, equals)] = line.substr(equals + 1);
  }
  EXPECT_FALSE(variables.empty()) << name;
  return variables;
}

SchedulerSettings Detect(const Environment& variables) {
  Result<SchedulerSettings> found = DetectSlurm(Environment(variables));
  EXPECT_TRUE(found.ok()) << (found.ok() ? "" : found.error().Format());
  return found.ok() ? *found : SchedulerSettings{};
}

// key -> "value from VARIABLE"
std::map<std::string, std::string> Settings(const SchedulerSettings& found) {
  std::map<std::string, std::string> out;
  for (const auto& setting : found.settings) out[setting.key] = setting.value + " from " + setting.variables;
  return out;
}

Error DetectError(const Environment& variables) {
  Result<SchedulerSettings> found = DetectSlurm(Environment(variables));
  if (found.ok()) {
    ADD_FAILURE() << "detected without error";
    return Error{};
  }
  EXPECT_EQ(found.error().code, ExitCode::kUnavailable);
  return found.error();
}

TEST(SlurmSettingsTest, MasterPortIsEvenAndStableInItsRange) {
  EXPECT_EQ(SlurmMasterPort(1), 20002);
  EXPECT_EQ(SlurmMasterPort(4999), 29998);
  EXPECT_EQ(SlurmMasterPort(5000), 20000);
  EXPECT_EQ(SlurmMasterPort(123456), 20000 + 2 * (123456 % 5000));
  for (int64_t job : {0, 7, 4242, 99999, 10000001}) {
    int port = SlurmMasterPort(job);
    EXPECT_EQ(port % 2, 0);
    EXPECT_GE(port, 20000);
    EXPECT_LE(port, 29998);
    EXPECT_NE(port + 1, SlurmMasterPort(job + 1)) << "the control port must not be the next job's master port";
  }
}

TEST(SlurmSettingsTest, SrunStepOnTheSecondNode) {
  SchedulerSettings found = Detect(Recorded("srun_step_node2_of_2"));
  EXPECT_EQ(found.scheduler, "slurm");
  EXPECT_EQ(found.job_id, "4");
  EXPECT_EQ(found.restart_count, 0);
  EXPECT_EQ(Settings(found), (std::map<std::string, std::string>{
                                 {"direct.nnodes", "2 from SLURM_STEP_NUM_NODES"},
                                 {"direct.node_rank", "1 from SLURM_NODEID"},
                                 {"direct.master_addr", "node1 from SLURM_STEP_NODELIST"},
                                 {"direct.master_port", "20008 from SLURM_JOB_ID"},
                             }));
}

TEST(SlurmSettingsTest, StepOnPartOfTheAllocationUsesTheStepsNodes) {
  // `srun -N1 -w node2` inside a 2-node batch job: Slurm numbers the step's
  // nodes (SLURM_NODEID=0), so node 0 is node2, not the job's first host.
  Environment step = Recorded("srun_step_on_second_node_of_batch");
  ASSERT_EQ(step["SLURM_JOB_NODELIST"], "node[1-2]");
  SchedulerSettings found = Detect(step);
  EXPECT_EQ(Settings(found), (std::map<std::string, std::string>{
                                 {"direct.nnodes", "1 from SLURM_STEP_NUM_NODES"},
                                 {"direct.node_rank", "0 from SLURM_NODEID"},
                                 {"direct.master_addr", "node2 from SLURM_STEP_NODELIST"},
                                 {"direct.master_port", "20012 from SLURM_JOB_ID"},
                             }));
}

TEST(SlurmSettingsTest, GpusOnTheNodeAreTheWorkersPerNode) {
  SchedulerSettings found = Detect(Recorded("srun_step_two_gpus_per_node"));
  EXPECT_EQ(Settings(found)["direct.nproc_per_node"], "2 from SLURM_GPUS_ON_NODE");
  EXPECT_EQ(Settings(found)["direct.master_addr"], "g1 from SLURM_STEP_NODELIST");

  Environment no_gpus = Recorded("srun_step_two_gpus_per_node");
  no_gpus["SLURM_GPUS_ON_NODE"] = "0";
  EXPECT_EQ(Settings(Detect(no_gpus)).count("direct.nproc_per_node"), 0u) << "0 GPUs leaves nproc to the launcher";
}

TEST(SlurmSettingsTest, RequeuedJobReportsItsRestarts) {
  SchedulerSettings found = Detect(Recorded("srun_step_after_requeue"));
  EXPECT_EQ(found.restart_count, 1);
  EXPECT_EQ(Settings(found)["direct.node_rank"], "0 from SLURM_NODEID");
}

TEST(SlurmSettingsTest, SeveralTasksPerNodeAreRefused) {
  Error error = DetectError(Recorded("srun_step_two_tasks_per_node"));
  EXPECT_NE(error.message.find("runs 4 tasks on 2 node(s)"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("SLURM_STEP_NUM_TASKS=4"), std::string::npos) << error.message;
  EXPECT_NE(error.hint.find("--ntasks-per-node=1"), std::string::npos) << error.hint;
}

TEST(SlurmSettingsTest, BatchScriptOfOneNodeJobIsAOneNodeStep) {
  SchedulerSettings found = Detect(Recorded("batch_script_1_node"));
  EXPECT_EQ(Settings(found), (std::map<std::string, std::string>{
                                 {"direct.nnodes", "1 from SLURM_JOB_NUM_NODES"},
                                 {"direct.node_rank", "0 from SLURM_NODEID"},
                                 {"direct.master_addr", "node1 from SLURM_JOB_NODELIST"},
                                 {"direct.master_port", "20014 from SLURM_JOB_ID"},
                             }));
}

TEST(SlurmSettingsTest, BatchScriptAndSallocShellOfSeveralNodesDeriveNothing) {
  for (const char* recorded : {"batch_script_2_nodes", "salloc_shell_2_nodes"}) {
    SchedulerSettings found = Detect(Recorded(recorded));
    EXPECT_EQ(found.scheduler, "slurm") << recorded;
    EXPECT_FALSE(found.job_id.empty()) << recorded;
    EXPECT_TRUE(found.settings.empty()) << recorded << ": not a step, so not one node of the job";
  }
}

TEST(SlurmSettingsTest, SpecialStepIdsAreNotSrunSteps) {
  Environment batch = Recorded("batch_script_2_nodes");
  batch["SLURM_STEP_ID"] = "4294967291";  // the batch step, should a Slurm version set it
  EXPECT_TRUE(Detect(batch).settings.empty());
}

TEST(SlurmSettingsTest, OutsideSlurmNothingIsDetected) {
  SchedulerSettings found = Detect({{"HOME", "/root"}, {"SLURM_CONF", "/etc/slurm/slurm.conf"}});
  EXPECT_TRUE(found.scheduler.empty());
  EXPECT_TRUE(found.settings.empty());
}

TEST(SlurmSettingsTest, OlderSpellingsAreFallbacks) {
  // SLURM_JOBID / SLURM_STEPID / SLURM_NNODES / SLURM_NODELIST only.
  SchedulerSettings found = Detect({{"SLURM_JOBID", "77"},
                                    {"SLURM_STEPID", "0"},
                                    {"SLURM_NNODES", "3"},
                                    {"SLURM_NODEID", "2"},
                                    {"SLURM_NODELIST", "gpu-a[07-09]"}});
  EXPECT_EQ(Settings(found), (std::map<std::string, std::string>{
                                 {"direct.nnodes", "3 from SLURM_NNODES"},
                                 {"direct.node_rank", "2 from SLURM_NODEID"},
                                 {"direct.master_addr", "gpu-a07 from SLURM_NODELIST"},
                                 {"direct.master_port", "20154 from SLURM_JOBID"},
                             }));
}

TEST(SlurmSettingsTest, MalformedVariablesAreNamed) {
  Environment step = Recorded("srun_step_node2_of_2");
  struct Case {
    const char* variable;
    const char* value;
    const char* expected;
  };
  for (const Case& c : {Case{"SLURM_NODEID", "one", "SLURM_NODEID='one'"},
                        Case{"SLURM_NODEID", "2", "SLURM_NODEID='2'"},
                        Case{"SLURM_STEP_NUM_NODES", "-1", "SLURM_STEP_NUM_NODES='-1'"},
                        Case{"SLURM_STEP_NODELIST", "node[1-2", "SLURM_STEP_NODELIST"},
                        Case{"SLURM_JOB_ID", "12x", "SLURM_JOB_ID='12x'"},
                        Case{"SLURM_RESTART_COUNT", "x", "SLURM_RESTART_COUNT='x'"}}) {
    Environment broken = step;
    broken[c.variable] = c.value;
    Error error = DetectError(broken);
    EXPECT_NE(error.message.find(c.expected), std::string::npos) << error.message;
  }
}

TEST(SlurmSettingsTest, AHugeNodeListGivesItsFirstHostWithoutBeingExpanded) {
  // 10^8 hosts: expanding them all took 2.4 GB and 19 s; only node 0 is needed.
  Environment step = Recorded("srun_step_node2_of_2");
  step["SLURM_STEP_NODELIST"] = "a[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]";
  std::clock_t start = std::clock();  // CPU time, whatever else the machine runs
  SchedulerSettings found = Detect(step);
  EXPECT_LT(std::clock() - start, CLOCKS_PER_SEC / 10);
  EXPECT_EQ(Settings(found)["direct.master_addr"], "a00000000 from SLURM_STEP_NODELIST");
}

TEST(SlurmSettingsTest, NodeCountsBeyondAnyClusterAreNamed) {
  Environment step = Recorded("srun_step_node2_of_2");
  step["SLURM_STEP_NUM_NODES"] = "4611686018427387904";
  Error error = DetectError(step);
  EXPECT_NE(error.message.find("SLURM_STEP_NUM_NODES='4611686018427387904' in the environment is not a number of "
                               "nodes from 1 to 262144"),
            std::string::npos)
      << error.message;
}

TEST(SlurmSettingsTest, ChosenByPlatformAutoAndSlurm) {
  Environment step(Recorded("srun_step_node2_of_2"));
  for (const char* platform : {"auto", "slurm"}) {
    Result<SchedulerSettings> found = DetectScheduler(step, platform);
    ASSERT_TRUE(found.ok()) << platform;
    EXPECT_EQ(found->scheduler, "slurm") << platform;
  }
  Result<SchedulerSettings> none = DetectScheduler(step, "none");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->scheduler.empty());
}

TEST(SlurmSettingsTest, SchedulerLayerSitsBelowTheUsersFlags) {
  LauncherSources sources;
  sources.environment = Environment(Recorded("srun_step_node2_of_2"));
  sources.flags = {{"direct.master_addr", {"10.0.0.5"}, "--master-addr"}};
  Result<LauncherConfig> config = LoadLauncherConfig(sources);
  ASSERT_TRUE(config.ok()) << config.error().Format();
  EXPECT_EQ(config->GetInt("direct.node_rank"), 1);
  EXPECT_EQ(config->OriginOf("direct.node_rank").Describe(), "slurm SLURM_NODEID");
  EXPECT_EQ(config->GetString("direct.master_addr"), "10.0.0.5");
  EXPECT_EQ(config->GetInt("direct.master_port"), 20008);
  EXPECT_EQ(config->scheduler().job_id, "4");
}

// CheckDirectInSlurmAllocation with the configuration `direct` would see there.
Status CheckDirect(const Environment& variables, std::vector<FlagSetting> flags = {}) {
  LauncherSources sources;
  sources.environment = Environment(variables);
  sources.flags = std::move(flags);
  Result<LauncherConfig> config = LoadLauncherConfig(sources);
  EXPECT_TRUE(config.ok()) << config.error().Format();
  if (!config.ok()) return config.error();
  return CheckDirectInSlurmAllocation(sources.environment, *config);
}

TEST(SlurmSettingsTest, DirectInAMultiNodeBatchScriptIsRefused) {
  Status batch = CheckDirect(Recorded("batch_script_2_nodes"));
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.error().code, ExitCode::kUnavailable);
  EXPECT_NE(batch.error().message.find("the batch script of Slurm job"), std::string::npos) << batch.error().message;
  EXPECT_NE(batch.error().message.find("SLURM_JOB_NODELIST=node[1-2]"), std::string::npos) << batch.error().message;
  EXPECT_NE(batch.error().hint.find("srun"), std::string::npos);

  Status salloc = CheckDirect(Recorded("salloc_shell_2_nodes"));
  ASSERT_FALSE(salloc.ok());
  EXPECT_NE(salloc.error().message.find("an salloc shell"), std::string::npos) << salloc.error().message;
}

TEST(SlurmSettingsTest, DirectInABatchScriptRunsWhenTheUserSaysSo) {
  Environment batch = Recorded("batch_script_2_nodes");
  EXPECT_TRUE(CheckDirect(batch, {{"direct.nnodes", {"1"}, "--nnodes"}}).ok());
  EXPECT_TRUE(CheckDirect(batch, {{"direct.platform", {"none"}, "--platform"}}).ok());
  Environment with_env = batch;
  with_env["PRIMUS_DIRECT_NNODES"] = "1";
  EXPECT_TRUE(CheckDirect(with_env).ok());
  EXPECT_TRUE(CheckDirect(Recorded("batch_script_1_node")).ok());
  EXPECT_TRUE(CheckDirect(Recorded("srun_step_node2_of_2")).ok());
  EXPECT_TRUE(CheckDirect({{"HOME", "/root"}}).ok());
}

}  // namespace
}  // namespace primus::config
