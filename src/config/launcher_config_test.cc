#include "config/launcher_config.h"

#include <gtest/gtest.h>

#include "config/testdata_path.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::config {
namespace {

// All seven layers present; each key below is set by several of them.
LauncherSources AllLayers() {
  LauncherSources sources;
  sources.system_file = TestDataPath("launcher/etc.yaml");
  sources.user_file = TestDataPath("launcher/home.yaml");
  sources.project_file = TestDataPath("launcher/project.yaml");
  sources.explicit_file = TestDataPath("launcher/explicit.yaml");
  sources.environment = Environment({
      {"PRIMUS_CONTAINER_IMAGE", "registry/env:3"},
      {"PRIMUS_DIRECT_NNODES", "4"},
      {"PET_NNODES", "3"},  // torchrun's input ranks below PRIMUS_*
      {"PET_NODE_RANK", "1"},
      {"PET_MASTER_PORT", "1234"},
      {"PRIMUS_LOG_LEVEL", "debug"},
      {"PRIMUS_SLURM_QOS", "env-qos"},
      {"PRIMUS_SLURM_OPTIONS", "--exclusive, --mem=0"},
      {"PRIMUS_CONTAINER_MOUNTS", "/env1:/env1,/env2:/env2"},
      {"PRIMUS_SYSFS_ROOT", "/tmp/sysfs"},  // not configuration: ignored
      {"LOG_ROOT", "/scratch"},             // used by ${LOG_ROOT:/tmp} in explicit.yaml
  });
  sources.set_assignments = {"container.image=registry/set:4", "slurm.time=2:00:00",
                             "direct.master_port=29500"};
  sources.flags = {
      {"container.image", {"registry/flag:5"}, "--image"},
      {"container.mounts", {"/f1:/f1"}, "--mount"},
      {"container.mounts", {"/f2:/f2"}, "--mount"},
      {"main.debug", {}, "--debug"},
  };
  return sources;
}

LauncherConfig Load(const LauncherSources& sources) {
  Result<LauncherConfig> config = LoadLauncherConfig(sources);
  EXPECT_TRUE(config.ok()) << config.error().message;
  return config.ok() ? *config : LauncherConfig(Value(), {});
}

Error LoadError(const LauncherSources& sources) {
  Result<LauncherConfig> config = LoadLauncherConfig(sources);
  if (config.ok()) {
    ADD_FAILURE() << "loaded without error";
    return Error{};
  }
  return config.error();
}

std::string Where(const LauncherConfig& config, std::string_view path) {
  std::string where = config.OriginOf(path).Describe();
  std::string dir = TestDataPath("launcher/");
  if (where.starts_with(dir)) where = where.substr(dir.size());
  return where;
}

TEST(LauncherConfigTest, DefaultsAloneGiveEveryKey) {
  LauncherConfig config = Load(LauncherSources());
  EXPECT_EQ(config.GetString("direct.nproc_per_node"), "auto");
  EXPECT_EQ(config.GetInt("direct.nnodes"), 1);
  EXPECT_EQ(config.GetInt("direct.master_port"), 0);
  EXPECT_EQ(config.GetDouble("direct.restart_backoff"), 1.0);
  EXPECT_FALSE(config.GetBool("main.debug"));
  EXPECT_TRUE(config.GetStringList("container.mounts").empty());
  EXPECT_EQ(config.GetString("container.pull"), "missing");
  EXPECT_EQ(Where(config, "container.pull"), "default");
}

TEST(LauncherConfigTest, EachLayerWinsKeyByKeyOverTheLayersBelow) {
  LauncherConfig config = Load(AllLayers());
  // 7. flags over --set over env over --config over ... over defaults.
  EXPECT_EQ(config.GetString("container.image"), "registry/flag:5");
  EXPECT_EQ(Where(config, "container.image"), "flag --image");
  EXPECT_TRUE(config.GetBool("main.debug"));
  EXPECT_EQ(Where(config, "main.debug"), "flag --debug");
  // 7. --set.
  EXPECT_EQ(config.GetString("slurm.time"), "2:00:00");
  EXPECT_EQ(Where(config, "slurm.time"), "--set");
  EXPECT_EQ(config.GetInt("direct.master_port"), 29500);  // over PET_MASTER_PORT
  EXPECT_EQ(Where(config, "direct.master_port"), "--set");
  // 6. environment: PRIMUS_* over PET_* and over every file.
  EXPECT_EQ(config.GetInt("direct.nnodes"), 4);
  EXPECT_EQ(Where(config, "direct.nnodes"), "env PRIMUS_DIRECT_NNODES");
  EXPECT_EQ(config.GetInt("direct.node_rank"), 1);
  EXPECT_EQ(Where(config, "direct.node_rank"), "env PET_NODE_RANK");
  EXPECT_EQ(config.GetString("main.log_level"), "debug");
  EXPECT_EQ(Where(config, "main.log_level"), "env PRIMUS_LOG_LEVEL");
  EXPECT_EQ(config.GetString("slurm.qos"), "env-qos");
  EXPECT_EQ(config.GetStringList("slurm.options"),
            (std::vector<std::string>{"--exclusive", "--mem=0"}));
  // 5. --config (and what it extends).
  EXPECT_EQ(config.GetString("container.user"), "1000");
  EXPECT_EQ(Where(config, "container.user"), "explicit.yaml:5:9");
  EXPECT_EQ(config.GetString("direct.log_dir"), "/scratch/logs");
  EXPECT_EQ(config.GetString("slurm.reservation"), "base-reservation");
  EXPECT_EQ(Where(config, "slurm.reservation"),
            "explicit_base.yaml:2:16 (via " + TestDataPath("launcher/explicit.yaml") + ")");
  // 4. ./.primus.yaml.
  EXPECT_EQ(config.GetString("slurm.partition"), "project-partition");
  EXPECT_EQ(config.GetDouble("direct.restart_backoff"), 2.0);
  EXPECT_EQ(config.GetString("direct.nproc_per_node"), "4");
  // 3. ~/.config/primus/config.yaml.
  EXPECT_EQ(config.GetString("slurm.account"), "home-account");
  EXPECT_EQ(Where(config, "slurm.account"), "home.yaml:3:12");
  EXPECT_EQ(config.GetInt("direct.max_restarts"), 1);
  // 2. /etc/primus/config.yaml: keys nobody above sets survive.
  EXPECT_EQ(config.GetString("container.shm_size"), "32g");
  EXPECT_EQ(Where(config, "container.shm_size"), "etc.yaml:6:13");
  // 1. defaults.
  EXPECT_EQ(config.GetString("k8s.namespace"), "default");
  EXPECT_EQ(Where(config, "k8s.namespace"), "default");
}

TEST(LauncherConfigTest, MapsMergeAcrossLayersKeyByKey) {
  LauncherConfig config = Load(AllLayers());
  EXPECT_EQ(config.GetStringMap("direct.env"),
            (std::vector<std::pair<std::string, std::string>>{
                {"NCCL_DEBUG", "INFO"}, {"FROM_ETC", "1"}, {"FROM_EXPLICIT", "yes"}}));
  EXPECT_EQ(Where(config, "direct.env.NCCL_DEBUG"), "home.yaml:8:17");
  EXPECT_EQ(Where(config, "direct.env.FROM_ETC"), "etc.yaml:15:15");
}

TEST(LauncherConfigTest, RepeatedListFlagsAppendAndReplaceLowerLayers) {
  LauncherConfig config = Load(AllLayers());
  // etc.yaml and PRIMUS_CONTAINER_MOUNTS had mounts; the two --mount flags replace them.
  EXPECT_EQ(config.GetStringList("container.mounts"), (std::vector<std::string>{"/f1:/f1", "/f2:/f2"}));
  LauncherSources without_flags = AllLayers();
  without_flags.flags.clear();
  EXPECT_EQ(Load(without_flags).GetStringList("container.mounts"),
            (std::vector<std::string>{"/env1:/env1", "/env2:/env2"}));
}

TEST(LauncherConfigTest, LongEnvironmentNameWinsOverTheShortOne) {
  LauncherSources sources;
  sources.environment = Environment({{"PRIMUS_LOG_LEVEL", "debug"}, {"PRIMUS_MAIN_LOG_LEVEL", "error"},
                                     {"PRIMUS_QUIET", "1"}, {"PET_NPROC_PER_NODE", "gpu"}});
  LauncherConfig config = Load(sources);
  EXPECT_EQ(config.GetString("main.log_level"), "error");
  EXPECT_TRUE(config.GetBool("main.quiet"));
  EXPECT_EQ(config.GetString("direct.nproc_per_node"), "gpu");
  EXPECT_EQ(EnvironmentVariablesFor("main.log_level"),
            (std::vector<std::string>{"PRIMUS_LOG_LEVEL", "PRIMUS_MAIN_LOG_LEVEL"}));
  EXPECT_EQ(EnvironmentVariablesFor("direct.nnodes"),
            (std::vector<std::string>{"PET_NNODES", "PRIMUS_DIRECT_NNODES"}));
}

TEST(LauncherConfigTest, EmptyEnvironmentVariableCountsAsUnset) {
  LauncherSources sources;
  sources.environment = Environment({{"PRIMUS_DIRECT_NNODES", ""}});
  EXPECT_EQ(Load(sources).GetInt("direct.nnodes"), 1);
}

TEST(LauncherConfigTest, UnknownSectionVariablesAreWarnedAboutNotApplied) {
  LauncherSources sources;
  sources.environment = Environment({{"PRIMUS_DIRECT_NNODE", "2"}, {"PRIMUS_SYSFS_ROOT", "/x"}});
  LauncherConfig config = Load(sources);
  EXPECT_EQ(config.GetInt("direct.nnodes"), 1);
  EXPECT_EQ(config.warnings(),
            (std::vector<std::string>{"environment variable PRIMUS_DIRECT_NNODE is not a "
                                      "configuration setting (did you mean "
                                      "PRIMUS_DIRECT_NNODES?); it is ignored"}));
}

TEST(LauncherConfigTest, EnvironmentValueOfTheWrongTypeNamesTheVariable) {
  LauncherSources sources;
  sources.environment = Environment({{"PRIMUS_DIRECT_NNODES", "abc"}});
  Error error = LoadError(sources);
  EXPECT_EQ(error.code, ExitCode::kConfig);
  EXPECT_EQ(error.message, "env PRIMUS_DIRECT_NNODES: direct.nnodes: expected an integer, got 'abc'");
  sources.environment = Environment({{"PET_MASTER_PORT", "port"}});
  EXPECT_EQ(LoadError(sources).message,
            "env PET_MASTER_PORT: direct.master_port: expected an integer, got 'port'");
  sources.environment = Environment({{"PRIMUS_DIRECT_NUMA_BIND", "maybe"}});
  EXPECT_EQ(LoadError(sources).message,
            "env PRIMUS_DIRECT_NUMA_BIND: direct.numa_bind: expected a boolean (true/false, "
            "yes/no, on/off, 1/0), got 'maybe'");
}

TEST(LauncherConfigTest, FlagValueOfTheWrongTypeNamesTheFlag) {
  LauncherSources sources;
  sources.flags = {{"direct.nnodes", {"abc"}, "--nnodes"}};
  Error error = LoadError(sources);
  EXPECT_EQ(error.code, ExitCode::kConfig);
  EXPECT_EQ(error.message, "flag --nnodes: direct.nnodes: expected an integer, got 'abc'");
  sources.flags = {{"direct.env", {"NCCL_DEBUG"}, "--env"}};
  EXPECT_EQ(LoadError(sources).message, "flag --env: expected NAME=VALUE, got 'NCCL_DEBUG'");
  sources.flags = {{"direct.nnodes", {}, "--nnodes"}};
  EXPECT_EQ(LoadError(sources).message, "flag --nnodes: a value is missing");
}

TEST(LauncherConfigTest, AnotherProgramsDefaultsSitJustAboveOurs) {
  // torchrun's default of one worker per node replaces our "auto", but a
  // file, the environment or a flag still wins over it.
  LauncherSources sources;
  sources.program = "torchrun";
  sources.program_defaults = {{"direct.nproc_per_node", {"1"}, "--nproc-per-node"},
                              {"direct.platform", {"none"}, "--platform"}};
  LauncherConfig config = Load(sources);
  EXPECT_EQ(config.GetString("direct.nproc_per_node"), "1");
  EXPECT_EQ(config.OriginOf("direct.nproc_per_node").Describe(), "torchrun default");
  sources.environment = Environment({{"PRIMUS_DIRECT_NPROC_PER_NODE", "4"}});
  EXPECT_EQ(Load(sources).GetString("direct.nproc_per_node"), "4");
  EXPECT_EQ(Load(sources).GetString("direct.platform"), "none");
  sources.program_defaults = {{"direct.nnodes", {"x"}, "--nnodes"}};
  EXPECT_EQ(LoadError(sources).message, "torchrun default: direct.nnodes: expected an integer, got 'x'");
}

TEST(LauncherConfigTest, AFlagReadFromTheEnvironmentNamesTheVariable) {
  LauncherSources sources;
  FlagSetting setting{"direct.log_dir", {"/logs"}, "PET_LOG_DIR"};
  setting.from_environment = true;
  sources.flags = {setting};
  LauncherConfig config = Load(sources);
  EXPECT_EQ(config.GetString("direct.log_dir"), "/logs");
  EXPECT_EQ(config.OriginOf("direct.log_dir").Describe(), "env PET_LOG_DIR");
}

TEST(LauncherConfigTest, FlagsForMapsAddEntries) {
  LauncherSources sources = AllLayers();
  sources.flags = {{"direct.env", {"NCCL_DEBUG=TRACE", "EXTRA=a=b"}, "--env"}};
  LauncherConfig config = Load(sources);
  EXPECT_EQ(config.GetStringMap("direct.env"),
            (std::vector<std::pair<std::string, std::string>>{{"NCCL_DEBUG", "TRACE"},
                                                              {"FROM_ETC", "1"},
                                                              {"FROM_EXPLICIT", "yes"},
                                                              {"EXTRA", "a=b"}}));
}

TEST(LauncherConfigTest, TypoInTheUserFileIsALocatedErrorWithASuggestion) {
  LauncherSources sources;
  sources.user_file = TestDataPath("launcher/typo.yaml");
  Error error = LoadError(sources);
  EXPECT_EQ(error.code, ExitCode::kConfig);
  EXPECT_EQ(error.message, TestDataPath("launcher/typo.yaml") +
                               ":3:3: unknown key 'direct.nproc_per_nod' (did you mean "
                               "'direct.nproc_per_node'?)");
}

TEST(LauncherConfigTest, FileErrorsAreLocated) {
  LauncherSources sources;
  sources.project_file = TestDataPath("launcher/misplaced.yaml");
  EXPECT_EQ(LoadError(sources).message,
            TestDataPath("launcher/misplaced.yaml") +
                ":1:1: unknown key 'image' (did you mean 'container.image' or 'k8s.image'?)");
  sources.project_file = TestDataPath("launcher/unknown_section.yaml");
  EXPECT_EQ(LoadError(sources).message, TestDataPath("launcher/unknown_section.yaml") +
                                            ":1:1: unknown key 'contianer' (did you mean 'container'?)");
  sources.project_file = TestDataPath("launcher/wrong_type.yaml");
  EXPECT_EQ(LoadError(sources).message,
            TestDataPath("launcher/wrong_type.yaml") +
                ":2:11: direct.nnodes: expected an integer, got a string ('two')");
  sources.project_file = TestDataPath("launcher/wrong_list.yaml");
  Error list_error = LoadError(sources);
  EXPECT_EQ(list_error.message,
            TestDataPath("launcher/wrong_list.yaml") +
                ":2:11: container.mounts: expected a list of strings, got a string ('/data:/data')");
  EXPECT_EQ(list_error.hint, "write a list: mounts: [a, b], or one '- item' per line");
  sources.project_file = TestDataPath("launcher/wrong_section.yaml");
  EXPECT_EQ(LoadError(sources).message,
            TestDataPath("launcher/wrong_section.yaml") +
                ":1:8: slurm: expected a map of settings, got a string ('gpu-partition')");
}

TEST(LauncherConfigTest, MissingOptionalFilesAreSkippedAMissingConfigFileIsAnError) {
  LauncherSources sources;
  sources.system_file = TestDataPath("launcher/absent-etc.yaml");
  sources.user_file = TestDataPath("launcher/absent-home.yaml");
  sources.project_file = TestDataPath("launcher/absent-project.yaml");
  EXPECT_TRUE(LoadLauncherConfig(sources).ok());
  sources.explicit_file = TestDataPath("launcher/absent-explicit.yaml");
  Error error = LoadError(sources);
  EXPECT_EQ(error.code, ExitCode::kConfig);
  EXPECT_EQ(error.message, "--config " + TestDataPath("launcher/absent-explicit.yaml") + ": no such file");
}

TEST(LauncherConfigTest, BadSetAssignmentIsAUsageError) {
  LauncherSources sources;
  sources.set_assignments = {"direct.nnodes"};
  Error error = LoadError(sources);
  EXPECT_EQ(error.code, ExitCode::kUsage);
  EXPECT_EQ(error.message, "--set: 'direct.nnodes': expected key=value");
  sources.set_assignments = {"direct.nnode=2"};
  EXPECT_EQ(LoadError(sources).message, "--set: unknown key 'direct.nnode' (did you mean 'direct.nnodes'?)");
}

TEST(LauncherConfigTest, FromProcessUsesTheStandardPaths) {
  LauncherSources sources = LauncherSources::FromProcess("exp.yaml", {"a.b=1"}, {});
  EXPECT_EQ(sources.system_file, "/etc/primus/config.yaml");
  EXPECT_TRUE(sources.user_file.ends_with("/primus/config.yaml"));
  EXPECT_EQ(sources.project_file, "./.primus.yaml");
  EXPECT_EQ(sources.explicit_file, "exp.yaml");
  EXPECT_EQ(sources.set_assignments, (std::vector<std::string>{"a.b=1"}));
}

// A fixed-size elastic PyTorchJob pod: PET_NNODES=3:3 is 3 nodes; a range
// 1:4 is an elastic job of 1 to 4 nodes meeting at the rendezvous endpoint.
TEST(LauncherConfigTest, KubeflowElasticNodeCounts) {
  LauncherSources sources;
  sources.environment = Environment({{"HOSTNAME", "gpt-worker-2"},
                                     {"PET_RDZV_ENDPOINT", "gpt-worker-0:23456"},
                                     {"PET_NNODES", "3:3"}});
  LauncherConfig config = Load(sources);
  EXPECT_EQ(config.GetInt("direct.nnodes"), 3);
  EXPECT_EQ(config.GetInt("direct.node_rank"), 2);

  sources.environment = Environment({{"HOSTNAME", "gpt-worker-2"},
                                     {"PET_RDZV_ENDPOINT", "gpt-worker-0:23456"},
                                     {"PET_NNODES", "1:4"}});
  LauncherConfig elastic = Load(sources);
  EXPECT_EQ(elastic.GetInt("direct.nnodes"), 4);
  EXPECT_EQ(elastic.GetInt("direct.min_nnodes"), 1);
  EXPECT_EQ(elastic.GetString("direct.rendezvous"), "c10d");
  EXPECT_EQ(elastic.GetInt("direct.control_port"), 23456);
}


TEST(LauncherConfigTest, HostileConfigFilesAreRefusedWithTheirLocation) {
  ScopedTempDir dir("launcher");
  LauncherSources sources;
  sources.explicit_file = "/dev/zero";
  Error device = LoadError(sources);
  EXPECT_EQ(device.code, ExitCode::kConfig);
  EXPECT_EQ(device.message, "/dev/zero is a character device, not a regular file");
  const std::pair<std::string, std::string> cases[] = {
      {"\"direct.nnodes\": 4\n", ":1:1: the key 'direct.nnodes' contains a dot"},
      {"direct:\n  nnodes: -3\n", ":2:11: direct.nnodes: -3 is out of range; expected from 1 to 262144"},
      {"direct:\n  node_rank: 4611686018427387904\n", ":2:14: direct.node_rank: 4611686018427387904 is out of range"},
  };
  for (const auto& [text, expected] : cases) {
    sources.explicit_file = dir.path() + "/c.yaml";
    ASSERT_TRUE(WriteFileAtomic(sources.explicit_file, text).ok());
    Error error = LoadError(sources);
    EXPECT_EQ(error.code, ExitCode::kConfig);
    EXPECT_EQ(error.message.rfind(sources.explicit_file + expected, 0), 0u) << error.message;
  }
}

}  // namespace
}  // namespace primus::config
