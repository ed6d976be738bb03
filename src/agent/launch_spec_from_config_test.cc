#include "agent/launch_spec_from_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <tuple>

#include "agent/agent_test_util.h"
#include "agent/launch_plan.h"
#include "util/files.h"

namespace primus::agent {
namespace {

config::LauncherConfig Load(const config::LauncherSources& sources) {
  auto loaded = config::LoadLauncherConfig(sources);
  EXPECT_TRUE(loaded.ok()) << loaded.error().Format();
  return loaded.ok() ? *loaded : config::LauncherConfig(config::Value(), {});
}

TEST(LaunchSpecFromConfigTest, DefaultsGiveASingleNodeLaunch) {
  auto spec = LaunchSpecFromConfig(Load({}));
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_TRUE(spec->argv.empty()) << "the worker command is the task's to set";
  EXPECT_EQ(spec->nproc_per_node, 1);
  EXPECT_TRUE(spec->nproc_per_node_auto);  // counted by ApplyPlatform
  EXPECT_EQ(spec->nnodes, 1);
  EXPECT_EQ(spec->master_port, 0);
  EXPECT_EQ(spec->master_addr, "");
  EXPECT_DOUBLE_EQ(spec->term_timeout_s, 30.0);
  EXPECT_EQ(spec->console_prefix, "[{host}:{rank}] ");
  EXPECT_TRUE(spec->ranks_filter.empty());
  EXPECT_DOUBLE_EQ(spec->telemetry_interval_s, 5.0);
}

TEST(LaunchSpecFromConfigTest, EveryDirectKeyLands) {
  testing::ScopedTempDir dir("spec-config");
  std::string file = dir.path() + "/launcher.yaml";
  ASSERT_TRUE(WriteFileAtomic(file,
                              "direct:\n"
                              "  nproc_per_node: \"4\"\n"
                              "  max_restarts: 2\n"
                              "  hang_timeout: 600\n"
                              "  ranks_filter: \"0,8-9\"\n"
                              "  env:\n"
                              "    FROM_FILE: file\n"
                              "    BOTH: file\n")
                  .ok());
  config::LauncherSources sources;
  sources.explicit_file = file;
  sources.environment = Environment({{"PET_NNODES", "2"}, {"PET_NODE_RANK", "1"}});
  sources.flags = {{"direct.master_addr", {"10.0.0.1"}, "--master-addr"},
                   {"direct.master_port", {"29500"}, "--master-port"},
                   {"direct.env", {"BOTH=flag"}, "--env"},
                   {"direct.term_timeout", {"5"}, "--term-timeout"},
                   {"direct.telemetry_interval", {"0.5"}, "--telemetry-interval"}};
  auto spec = LaunchSpecFromConfig(Load(sources));
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->nproc_per_node, 4);
  EXPECT_FALSE(spec->nproc_per_node_auto);
  EXPECT_EQ(spec->nnodes, 2);
  EXPECT_EQ(spec->node_rank, 1);
  EXPECT_EQ(spec->master_addr, "10.0.0.1");
  EXPECT_EQ(spec->master_port, 29500);
  EXPECT_EQ(spec->max_restarts, 2);
  EXPECT_DOUBLE_EQ(spec->hang_timeout_s, 600);
  EXPECT_DOUBLE_EQ(spec->term_timeout_s, 5);
  EXPECT_DOUBLE_EQ(spec->telemetry_interval_s, 0.5);
  EXPECT_EQ(spec->ranks_filter, (std::vector<int>{0, 8, 9}));
  // File entries are defaults; the command line's override.
  EXPECT_EQ(spec->env, (std::map<std::string, std::string>{{"FROM_FILE", "file"}}));
  EXPECT_EQ(spec->env_overrides, (std::map<std::string, std::string>{{"BOTH", "flag"}}));
}

TEST(LaunchSpecFromConfigTest, ConsoleStreamsRunIdRoleAndOmpThreads) {
  config::LauncherSources sources;
  sources.flags = {{"direct.local_ranks_filter", {"0,2"}, "--local-ranks-filter"},
                   {"direct.redirects", {"3"}, "--redirects"},
                   {"direct.tee", {"0:2,1:1"}, "--tee"},
                   {"direct.run_id", {"job-7"}, "--rdzv-id"},
                   {"direct.role", {"trainer"}, "--role"},
                   {"direct.omp_num_threads", {"torchrun"}, "torchrun"},
                   {"direct.worker_stderr", {"stderr"}, "torchrun"}};
  auto spec = LaunchSpecFromConfig(Load(sources));
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->local_ranks_filter, (std::vector<int>{0, 2}));
  EXPECT_TRUE(spec->ranks_filter.empty());
  EXPECT_EQ(spec->redirects.For(5), 3);
  EXPECT_EQ(spec->tee.For(0), kStderrStream);
  EXPECT_EQ(spec->tee.For(1), kStdoutStream);
  EXPECT_EQ(spec->run_id, "job-7");
  EXPECT_EQ(spec->role, "trainer");
  EXPECT_EQ(spec->omp_threads, LaunchSpec::OmpThreads::kTorchrun);
  EXPECT_TRUE(spec->stderr_to_stderr);

  auto defaults = LaunchSpecFromConfig(Load({}));
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->redirects.empty() && defaults->tee.empty() && defaults->local_ranks_filter.empty());
  EXPECT_EQ(defaults->role, "default");
  EXPECT_EQ(defaults->omp_threads, LaunchSpec::OmpThreads::kCpuShare);
  EXPECT_FALSE(defaults->stderr_to_stderr);

  for (auto [key, value, code] : {std::tuple{"direct.redirects", "4", ExitCode::kUsage},
                                  std::tuple{"direct.local_ranks_filter", "x", ExitCode::kUsage},
                                  std::tuple{"direct.omp_num_threads", "8", ExitCode::kConfig},
                                  std::tuple{"direct.worker_stderr", "both", ExitCode::kConfig}}) {
    config::LauncherSources bad;
    bad.flags = {{key, {value}, "--flag"}};
    auto spec = LaunchSpecFromConfig(Load(bad));
    ASSERT_FALSE(spec.ok()) << key;
    EXPECT_EQ(spec.error().code, code) << key;
  }
}

TEST(LaunchSpecFromConfigTest, ProgressFormatAndRegexAreCheckedWhereGiven) {
  config::LauncherSources given;
  given.flags = {{"direct.progress_format", {"regex"}, "--progress-format"},
                 {"direct.progress_regex", {"it (?P<step>\\d+) L (?P<loss>[0-9.]+)"}, "--progress-regex"}};
  auto spec = LaunchSpecFromConfig(Load(given));
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->progress_format, telemetry::ProgressFormat::kRegex);
  // regex without a pattern names the format's flag and says what is missing
  config::LauncherSources bare;
  bare.flags = {{"direct.progress_format", {"regex"}, "--progress-format"}};
  auto missing = LaunchSpecFromConfig(Load(bare));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kConfig);
  EXPECT_NE(missing.error().Format().find("--progress-format"), std::string::npos) << missing.error().Format();
  EXPECT_NE(missing.error().message.find("gives no pattern"), std::string::npos) << missing.error().message;
}

TEST(LaunchSpecFromConfigTest, NprocPerNodeForms) {
  for (const char* text : {"auto", "gpu", " GPU "}) {
    config::LauncherSources sources;
    sources.flags = {{"direct.nproc_per_node", {text}, "--nproc-per-node"}};
    auto spec = LaunchSpecFromConfig(Load(sources));
    ASSERT_TRUE(spec.ok()) << text;
    EXPECT_TRUE(spec->nproc_per_node_auto) << text;
    EXPECT_EQ(spec->nproc_per_node_gpu, std::string(text) != "auto") << text << ": gpu must find a GPU";
  }
  config::LauncherSources sources;
  sources.flags = {{"direct.nproc_per_node", {"cpu"}, "--nproc-per-node"}};
  auto spec = LaunchSpecFromConfig(Load(sources));
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->nproc_per_node, UsableCpuCount());
  EXPECT_FALSE(spec->nproc_per_node_auto);
}

TEST(LaunchSpecFromConfigTest, EnvFromVariablesCountsAsExplicit) {
  config::LauncherSources sources;
  sources.environment = Environment({{"PRIMUS_DIRECT_ENV", "FROM_VAR=1"}});
  auto spec = LaunchSpecFromConfig(Load(sources));
  ASSERT_TRUE(spec.ok()) << spec.error().Format();
  EXPECT_EQ(spec->env_overrides, (std::map<std::string, std::string>{{"FROM_VAR", "1"}}));
}

TEST(LaunchSpecFromConfigTest, BadValuesAreUsageErrors) {
  config::LauncherSources sources;
  for (const char* bad : {"lots", "0", "-2", "", "5000"}) {
    sources.flags = {{"direct.nproc_per_node", {bad}, "--nproc-per-node"}};
    auto spec = LaunchSpecFromConfig(Load(sources));
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_EQ(spec.error().code, ExitCode::kUsage) << bad;
  }
  sources.flags = {{"direct.ranks_filter", {"0-"}, "--ranks-filter"}};
  auto spec = LaunchSpecFromConfig(Load(sources));
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, ExitCode::kUsage);
}

}  // namespace
}  // namespace primus::agent
