// DetectPod on the environments real pods have: a Kubeflow PyTorchJob
// (training-operator v1, current and pre-1.7, elastic), a Trainer v2 TrainJob,
// our Indexed Job manifest, a JobSet, and the seeds' commercial platform;
// then the same environments through the whole configuration layering, where
// the environment layer reads PET_* too and must agree.
#include <gtest/gtest.h>

#include <map>

#include "config/launcher_config.h"
#include "config/scheduler_settings.h"

namespace primus::config {
namespace {

// What every pod has besides the convention's variables.
Environment Pod(Environment variables) {
  variables.emplace("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  variables.emplace("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  variables.emplace("KUBERNETES_SERVICE_PORT", "443");
  variables.emplace("KUBERNETES_PORT", "tcp://10.96.0.1:443");
  return variables;
}

// PyTorchJob `bert`, 1 Master + 3 Workers, nprocPerNode "8": the pod of
// Worker 1 (training-operator 1.8's setPodEnv).
Environment PyTorchJobWorker1() {
  return Pod({{"HOSTNAME", "bert-worker-1"},
              {"PYTHONUNBUFFERED", "0"},
              {"MASTER_PORT", "23456"},
              {"PET_MASTER_PORT", "23456"},
              {"MASTER_ADDR", "bert-master-0"},
              {"PET_MASTER_ADDR", "bert-master-0"},
              {"WORLD_SIZE", "32"},
              {"RANK", "2"},
              {"PET_NPROC_PER_NODE", "8"},
              {"PET_NODE_RANK", "2"},
              {"PET_NNODES", "4"}});
}

std::map<std::string, std::pair<std::string, std::string>> ByKey(const SchedulerSettings& found) {
  std::map<std::string, std::pair<std::string, std::string>> settings;
  for (const auto& setting : found.settings) settings[setting.key] = {setting.value, setting.variables};
  return settings;
}

SchedulerSettings Detect(const Environment& env, std::string_view platform = "auto") {
  Result<SchedulerSettings> found = DetectPod(env, platform);
  EXPECT_TRUE(found.ok()) << found.error().message;
  return found.ok() ? *found : SchedulerSettings{};
}

Error DetectError(const Environment& env, std::string_view platform = "auto") {
  Result<SchedulerSettings> found = DetectPod(env, platform);
  if (found.ok()) {
    ADD_FAILURE() << "detected " << found->scheduler << " without error";
    return Error{};
  }
  EXPECT_EQ(found.error().code, ExitCode::kUnavailable) << found.error().message;
  EXPECT_FALSE(found.error().hint.empty());
  return found.error();
}

using Pair = std::pair<std::string, std::string>;

TEST(PodSettingsTest, PyTorchJobWorkerWhereWorldSizeCountsProcesses) {
  SchedulerSettings found = Detect(PyTorchJobWorker1());
  EXPECT_EQ(found.scheduler, "pytorchjob");
  EXPECT_EQ(found.job_id, "bert");
  auto settings = ByKey(found);
  EXPECT_EQ(settings["direct.nnodes"], Pair("4", "PET_NNODES"));
  EXPECT_EQ(settings["direct.node_rank"], Pair("2", "PET_NODE_RANK"));
  EXPECT_EQ(settings["direct.nproc_per_node"], Pair("8", "PET_NPROC_PER_NODE"));
  EXPECT_EQ(settings["direct.master_addr"], Pair("bert-master-0", "PET_MASTER_ADDR"));
  EXPECT_EQ(settings["direct.master_port"], Pair("23456", "PET_MASTER_PORT"));
}

TEST(PodSettingsTest, PyTorchJobMasterWithoutPetMasterVariables) {
  // Operators between 1.7 and 1.8 set MASTER_* only; nprocPerNode auto makes
  // WORLD_SIZE the pod count.
  SchedulerSettings found = Detect(Pod({{"HOSTNAME", "bert-master-0"},
                                        {"MASTER_PORT", "23456"},
                                        {"MASTER_ADDR", "bert-master-0"},
                                        {"WORLD_SIZE", "2"},
                                        {"RANK", "0"},
                                        {"PET_NPROC_PER_NODE", "auto"},
                                        {"PET_NODE_RANK", "0"},
                                        {"PET_NNODES", "2"}}));
  EXPECT_EQ(found.scheduler, "pytorchjob");
  auto settings = ByKey(found);
  EXPECT_EQ(settings["direct.node_rank"], Pair("0", "PET_NODE_RANK"));
  EXPECT_EQ(settings["direct.nproc_per_node"], Pair("auto", "PET_NPROC_PER_NODE"));
  EXPECT_EQ(settings["direct.master_addr"], Pair("bert-master-0", "MASTER_ADDR"));
  EXPECT_EQ(settings["direct.master_port"], Pair("23456", "MASTER_PORT"));
}

TEST(PodSettingsTest, PyTorchJobWithOnlyRankGivesTheNodeRank) {
  Environment env = Pod({{"MASTER_ADDR", "bert-master-0"}, {"MASTER_PORT", "23456"}, {"WORLD_SIZE", "3"},
                         {"RANK", "2"}, {"PET_NNODES", "3"}});
  EXPECT_EQ(ByKey(Detect(env))["direct.node_rank"], Pair("2", "RANK"));
}

TEST(PodSettingsTest, PreV17PyTorchJobReadsAsThePlatformConvention) {
  // No PET_* at all: WORLD_SIZE is the pod count there, as on the platforms.
  SchedulerSettings found = Detect(Pod({{"MASTER_ADDR", "bert-master-0"}, {"MASTER_PORT", "23456"},
                                        {"WORLD_SIZE", "4"}, {"RANK", "3"}, {"HOSTNAME", "bert-worker-2"}}));
  EXPECT_EQ(found.scheduler, "platform");
  EXPECT_EQ(ByKey(found)["direct.nnodes"], Pair("4", "WORLD_SIZE"));
  EXPECT_EQ(ByKey(found)["direct.node_rank"], Pair("3", "RANK"));
  Error error = DetectError(Pod({{"MASTER_ADDR", "bert-master-0"}, {"WORLD_SIZE", "4"}, {"RANK", "3"}}), "pytorchjob");
  EXPECT_NE(error.message.find("PET_NNODES is not set"), std::string::npos) << error.message;
  EXPECT_NE(error.hint.find("--platform platform"), std::string::npos) << error.hint;
}

TEST(PodSettingsTest, ElasticPyTorchJobTakesTheRankFromTheHostName) {
  // elasticPolicy with minReplicas = maxReplicas = 3 and no Master replica.
  SchedulerSettings found = Detect(Pod({{"HOSTNAME", "gpt-worker-2"},
                                        {"PYTHONUNBUFFERED", "0"},
                                        {"PET_RDZV_ENDPOINT", "gpt-worker-0:23456"},
                                        {"PET_RDZV_BACKEND", "c10d"},
                                        {"PET_NNODES", "3:3"},
                                        {"PET_MAX_RESTARTS", "3"},
                                        {"PET_NPROC_PER_NODE", "2"}}));
  EXPECT_EQ(found.scheduler, "pytorchjob");
  EXPECT_EQ(found.job_id, "gpt");
  auto settings = ByKey(found);
  EXPECT_EQ(settings["direct.nnodes"], Pair("3", "PET_NNODES"));
  EXPECT_EQ(settings["direct.node_rank"], Pair("2", "HOSTNAME, PET_RDZV_ENDPOINT"));
  EXPECT_EQ(settings["direct.master_addr"], Pair("gpt-worker-0", "PET_RDZV_ENDPOINT"));
  EXPECT_EQ(settings["direct.master_port"], Pair("23456", "PET_RDZV_ENDPOINT"));
}

// An elastic range: the pods meet at the rendezvous endpoint, whose pod
// coordinates and hands node ranks out; nothing names this pod's rank.
TEST(PodSettingsTest, ElasticRangeMeetsAtTheRendezvousEndpoint) {
  SchedulerSettings found = Detect(Pod({{"HOSTNAME", "gpt-worker-1"}, {"PET_RDZV_ENDPOINT", "gpt-worker-0:23456"},
                                          {"PET_NNODES", "1:4"}, {"PET_NPROC_PER_NODE", "2"}}));
  auto settings = ByKey(found);
  EXPECT_EQ(settings["direct.nnodes"], Pair("4", "PET_NNODES"));
  EXPECT_EQ(settings["direct.min_nnodes"], Pair("1", "PET_NNODES"));
  EXPECT_EQ(settings["direct.rendezvous"], Pair("c10d", "PET_NNODES"));
  EXPECT_EQ(settings["direct.master_addr"], Pair("gpt-worker-0", "PET_RDZV_ENDPOINT"));
  EXPECT_EQ(settings["direct.control_port"], Pair("23456", "PET_RDZV_ENDPOINT"));
  EXPECT_EQ(settings.count("direct.node_rank"), 0u);

  Error no_endpoint = DetectError(Pod({{"HOSTNAME", "gpt-worker-1"}, {"PET_NNODES", "1:4"}}), "pytorchjob");
  EXPECT_NE(no_endpoint.message.find("PET_RDZV_ENDPOINT"), std::string::npos) << no_endpoint.message;
}

TEST(PodSettingsTest, UnknownRankIsAnError) {

  Error rank = DetectError(Pod({{"HOSTNAME", "somewhere-else"}, {"PET_RDZV_ENDPOINT", "gpt-worker-0:23456"},
                                {"PET_NNODES", "2"}}));
  EXPECT_NE(rank.message.find("no node rank: none of PET_NODE_RANK, RANK"), std::string::npos) << rank.message;
}

TEST(PodSettingsTest, TrainerV2TrainJobReadsAsPyTorchJob) {
  // Kubeflow Trainer v2 on a JobSet: PET_* from the torch plugin, and the
  // JobSet's own JOB_COMPLETION_INDEX (which PET_NODE_RANK is taken from).
  SchedulerSettings found = Detect(Pod({{"HOSTNAME", "llm-node-0-1"},
                                        {"JOB_COMPLETION_INDEX", "1"},
                                        {"PET_NNODES", "2"},
                                        {"PET_NPROC_PER_NODE", "auto"},
                                        {"PET_NODE_RANK", "1"},
                                        {"PET_MASTER_ADDR", "llm-node-0-0.llm"},
                                        {"PET_MASTER_PORT", "29400"}}));
  EXPECT_EQ(found.scheduler, "pytorchjob");
  auto settings = ByKey(found);
  EXPECT_EQ(settings["direct.node_rank"], Pair("1", "PET_NODE_RANK"));
  EXPECT_EQ(settings["direct.master_addr"], Pair("llm-node-0-0.llm", "PET_MASTER_ADDR"));
}

TEST(PodSettingsTest, PyTorchJobContradictionsNameTheVariables) {
  Environment disagree = PyTorchJobWorker1();
  Environment variables = disagree;
  variables["RANK"] = "3";
  Error rank = DetectError(Environment(variables));
  EXPECT_NE(rank.message.find("PET_NODE_RANK=2 and RANK=3 disagree"), std::string::npos) << rank.message;

  variables = PyTorchJobWorker1();
  variables["WORLD_SIZE"] = "5";
  Error world = DetectError(Environment(variables));
  EXPECT_NE(world.message.find("WORLD_SIZE=5 is neither PET_NNODES=4 pods nor pods x PET_NPROC_PER_NODE=8"),
            std::string::npos)
      << world.message;

  variables = PyTorchJobWorker1();
  variables["PET_NODE_RANK"] = "4";
  Error range = DetectError(Environment(variables));
  EXPECT_NE(range.message.find("PET_NODE_RANK=4 is out of range"), std::string::npos) << range.message;

  variables = PyTorchJobWorker1();
  variables["PET_NNODES"] = "four";
  Error number = DetectError(Environment(variables));
  EXPECT_NE(number.message.find("PET_NNODES=four is not a number"), std::string::npos) << number.message;
}

TEST(PodSettingsTest, OurIndexedJobManifest) {
  // What `primus-cli k8s manifest` gives each pod, and what Kubernetes adds.
  SchedulerSettings found = Detect(Pod({{"HOSTNAME", "train-1"},
                                        {"JOB_COMPLETION_INDEX", "1"},
                                        {"PRIMUS_DIRECT_PLATFORM", "jobset"},
                                        {"PRIMUS_DIRECT_NNODES", "2"},
                                        {"PRIMUS_DIRECT_MASTER_ADDR", "train-0.train"},
                                        {"PRIMUS_DIRECT_MASTER_PORT", "29500"},
                                        {"PRIMUS_JOB_TOKEN", "0123456789abcdef"}}),
                                   "jobset");
  EXPECT_EQ(found.scheduler, "jobset");
  EXPECT_EQ(found.job_id, "train");
  // Only the rank is the convention's; the rest the environment layer reads.
  ASSERT_EQ(found.settings.size(), 1u);
  EXPECT_EQ(ByKey(found)["direct.node_rank"], Pair("1", "JOB_COMPLETION_INDEX"));
}

TEST(PodSettingsTest, JobSetMasterFromItsStableHostNames) {
  // A JobSet whose pod template maps its annotations into the environment
  // (downward API) and sets WORLD_SIZE to the node count.
  SchedulerSettings found = Detect(Pod({{"HOSTNAME", "pretrain-node-0-3"},
                                        {"JOB_COMPLETION_INDEX", "3"},
                                        {"JOBSET_NAME", "pretrain"},
                                        {"REPLICATED_JOB_NAME", "node"},
                                        {"JOB_INDEX", "0"},
                                        {"WORLD_SIZE", "4"}}));
  EXPECT_EQ(found.scheduler, "jobset");
  EXPECT_EQ(found.job_id, "pretrain");
  auto settings = ByKey(found);
  EXPECT_EQ(settings["direct.nnodes"], Pair("4", "WORLD_SIZE"));
  EXPECT_EQ(settings["direct.node_rank"], Pair("3", "JOB_COMPLETION_INDEX"));
  EXPECT_EQ(settings["direct.master_addr"], Pair("pretrain-node-0-0.pretrain", "JOBSET_NAME, REPLICATED_JOB_NAME"));
  EXPECT_EQ(settings["direct.master_port"], Pair("29500", "default (no MASTER_PORT)"));
}

TEST(PodSettingsTest, JobSetErrors) {
  Error later_job = DetectError(Pod({{"JOB_COMPLETION_INDEX", "0"}, {"JOB_INDEX", "1"}, {"WORLD_SIZE", "4"}}));
  EXPECT_NE(later_job.message.find("JOB_INDEX=1"), std::string::npos) << later_job.message;

  Error beyond = DetectError(Pod({{"JOB_COMPLETION_INDEX", "2"}, {"PRIMUS_DIRECT_NNODES", "2"},
                                  {"PRIMUS_DIRECT_MASTER_ADDR", "t-0.t"}}));
  EXPECT_NE(beyond.message.find("JOB_COMPLETION_INDEX=2 is not below PRIMUS_DIRECT_NNODES=2"), std::string::npos)
      << beyond.message;

  Error no_master = DetectError(Pod({{"JOB_COMPLETION_INDEX", "1"}, {"PRIMUS_DIRECT_NNODES", "2"}}));
  EXPECT_NE(no_master.message.find("no master address"), std::string::npos) << no_master.message;

  Error no_count = DetectError(Pod({{"JOB_COMPLETION_INDEX", "1"}}), "jobset");
  EXPECT_NE(no_count.message.find("nothing gives the number of nodes"), std::string::npos) << no_count.message;

  Error rank = DetectError(Pod({{"JOB_COMPLETION_INDEX", "1"}, {"WORLD_SIZE", "2"}, {"RANK", "0"},
                                {"MASTER_ADDR", "t-0.t"}}));
  EXPECT_NE(rank.message.find("JOB_COMPLETION_INDEX=1 and RANK=0 disagree"), std::string::npos) << rank.message;

  Error absent = DetectError(Pod({}), "jobset");
  EXPECT_NE(absent.message.find("JOB_COMPLETION_INDEX is not set"), std::string::npos) << absent.message;
}

TEST(PodSettingsTest, SeedPlatformPod) {
  SchedulerSettings found = Detect(Pod({{"HOSTNAME", "jo-dbxfe2k2l635222i-worker-1"},
                                        {"WORLD_SIZE", "2"},
                                        {"RANK", "1"},
                                        {"MASTER_ADDR", "jo-dbxfe2k2l635222i-worker-0"},
                                        {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(found.scheduler, "platform");
  auto settings = ByKey(found);
  EXPECT_EQ(settings["direct.nnodes"], Pair("2", "WORLD_SIZE"));
  EXPECT_EQ(settings["direct.node_rank"], Pair("1", "RANK"));
  EXPECT_EQ(settings["direct.master_addr"], Pair("jo-dbxfe2k2l635222i-worker-0", "MASTER_ADDR"));
  EXPECT_EQ(settings["direct.master_port"], Pair("29500", "MASTER_PORT"));
}

TEST(PodSettingsTest, PlatformContradictionsAndMissingVariables) {
  Error rank = DetectError(Pod({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_ADDR", "m"}, {"MASTER_PORT", "1"}}));
  EXPECT_NE(rank.message.find("RANK=2 is not below WORLD_SIZE=2"), std::string::npos) << rank.message;

  Error number = DetectError(Pod({{"WORLD_SIZE", "two"}, {"RANK", "0"}, {"MASTER_ADDR", "m"}}));
  EXPECT_NE(number.message.find("WORLD_SIZE=two is not a number"), std::string::npos) << number.message;

  Error port = DetectError(Pod({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "m"}, {"MASTER_PORT", "99999"}}));
  EXPECT_NE(port.message.find("MASTER_PORT=99999 is out of range"), std::string::npos) << port.message;

  Error missing = DetectError(Pod({{"WORLD_SIZE", "2"}}), "platform");
  EXPECT_NE(missing.message.find("RANK, MASTER_ADDR, MASTER_PORT are not set"), std::string::npos) << missing.message;

  // auto without MASTER_PORT: torchrun's default port.
  SchedulerSettings found = Detect(Pod({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "m"}}));
  EXPECT_EQ(ByKey(found)["direct.master_port"], Pair("29500", "default (no MASTER_PORT)"));
}

TEST(PodSettingsTest, AutoNeedsEvidenceOfAMultiNodeJob) {
  EXPECT_TRUE(Detect(Pod({})).scheduler.empty());
  // An Indexed Job of independent pods (a sweep): no node count anywhere.
  EXPECT_TRUE(Detect(Pod({{"JOB_COMPLETION_INDEX", "3"}, {"HOSTNAME", "sweep-3"}})).scheduler.empty());
  // torchrun-style PET_* on a workstation, without any master.
  EXPECT_TRUE(Detect(Pod({{"PET_NNODES", "3"}, {"PET_NODE_RANK", "1"}})).scheduler.empty());
  // WORLD_SIZE and RANK alone (no MASTER_ADDR): not a platform pod.
  EXPECT_TRUE(Detect(Pod({{"WORLD_SIZE", "1"}, {"RANK", "0"}})).scheduler.empty());
}

TEST(PodSettingsTest, InsideAnAgentsWorkerAutoDetectsNothing) {
  Environment variables = PyTorchJobWorker1();
  variables["LOCAL_RANK"] = "3";
  variables["TORCHELASTIC_RUN_ID"] = "20260101-000000-abcdef";
  Result<SchedulerSettings> found = DetectScheduler(Environment(variables), "auto");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_TRUE(found->scheduler.empty());
}

// ------------------------------------------------- through the configuration

LauncherConfig Load(const Environment& env, std::vector<FlagSetting> flags = {}) {
  LauncherSources sources;
  sources.environment = env;
  sources.flags = std::move(flags);
  Result<LauncherConfig> config = LoadLauncherConfig(sources);
  EXPECT_TRUE(config.ok()) << config.error().message;
  return config.ok() ? *config : LauncherConfig(Value(), {});
}

TEST(PodSettingsTest, PlatformPodThroughTheLayersNamesTheVariables) {
  LauncherConfig config = Load(Pod({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_ADDR", "jo-x-worker-0"},
                                    {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(config.scheduler().scheduler, "platform");
  EXPECT_EQ(config.GetInt("direct.nnodes"), 2);
  EXPECT_EQ(config.GetInt("direct.node_rank"), 1);
  EXPECT_EQ(config.GetString("direct.master_addr"), "jo-x-worker-0");
  EXPECT_EQ(config.GetInt("direct.master_port"), 29500);
  EXPECT_EQ(config.OriginOf("direct.nnodes").Describe(), "platform WORLD_SIZE");
  EXPECT_EQ(config.OriginOf("direct.node_rank").Describe(), "platform RANK");
  EXPECT_EQ(config.OriginOf("direct.master_addr").Describe(), "platform MASTER_ADDR");
}

TEST(PodSettingsTest, PyTorchJobThroughTheLayersAgreesWithTheEnvironmentLayer) {
  // PET_* are read by the environment layer too (above this one): the values
  // agree, and the variables the environment layer does not read (MASTER_*)
  // come from the convention.
  Environment variables = PyTorchJobWorker1();
  variables.erase("PET_MASTER_ADDR");
  variables.erase("PET_MASTER_PORT");
  LauncherConfig config = Load(Environment(variables));
  EXPECT_EQ(config.scheduler().scheduler, "pytorchjob");
  EXPECT_EQ(config.GetInt("direct.nnodes"), 4);
  EXPECT_EQ(config.GetInt("direct.node_rank"), 2);
  EXPECT_EQ(config.GetString("direct.nproc_per_node"), "8");
  EXPECT_EQ(config.GetString("direct.master_addr"), "bert-master-0");
  EXPECT_EQ(config.GetInt("direct.master_port"), 23456);
  EXPECT_EQ(config.OriginOf("direct.nnodes").Describe(), "env PET_NNODES");
  EXPECT_EQ(config.OriginOf("direct.master_addr").Describe(), "pytorchjob MASTER_ADDR");
  EXPECT_EQ(config.OriginOf("direct.master_port").Describe(), "pytorchjob MASTER_PORT");
}

TEST(PodSettingsTest, FlagsAndPlatformChoiceWin) {
  Environment env = Pod({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_ADDR", "m0"}, {"MASTER_PORT", "29500"}});
  LauncherConfig flagged = Load(env, {{"direct.node_rank", {"0"}, "--node-rank"}});
  EXPECT_EQ(flagged.GetInt("direct.node_rank"), 0);
  EXPECT_EQ(flagged.OriginOf("direct.node_rank").Describe(), "flag --node-rank");

  LauncherConfig none = Load(env, {{"direct.platform", {"none"}, "--platform"}});
  EXPECT_TRUE(none.scheduler().scheduler.empty());
  EXPECT_EQ(none.GetInt("direct.nnodes"), 1);

  LauncherSources sources;
  sources.environment = env;
  sources.flags = {{"direct.platform", {"pytorchjob"}, "--platform"}};
  Result<LauncherConfig> wrong = LoadLauncherConfig(sources);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, ExitCode::kUnavailable);
  EXPECT_NE(wrong.error().message.find("PET_NNODES is not set"), std::string::npos) << wrong.error().message;
}

}  // namespace
}  // namespace primus::config
