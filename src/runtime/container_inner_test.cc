#include "runtime/container_inner.h"

#include <gtest/gtest.h>

#include "config/launcher_config.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

// The real tables: direct's flags and the global ones.
const std::vector<OptionSpec>& DirectOptions() { return RuntimeRegistry::Global().Find("direct")->options(); }

class InnerTest : public ::testing::Test {
 protected:
  config::LauncherConfig Load(const config::LauncherSources& sources) {
    auto loaded = config::LoadLauncherConfig(sources);
    EXPECT_TRUE(loaded.ok()) << loaded.error().Format();
    return loaded.ok() ? *loaded : config::LauncherConfig(config::Value(), {});
  }
  std::string Inner(const config::LauncherConfig& launcher, std::set<std::string> forwarded = {},
                    std::string config_file = "") {
    InnerCommandRequest inputs;
    inputs.invocation = &invocation_;
    inputs.launcher = &launcher;
    inputs.direct_options = &DirectOptions();
    inputs.global_options = &GlobalOptions();
    inputs.forwarded_env = std::move(forwarded);
    inputs.config_file = std::move(config_file);
    return ShellJoin(InnerArguments(inputs));
  }
  void SetUp() override {
    invocation_.chain = {ModeInvocation{"container", "", {}, {}, {}}};
    invocation_.task = "run";
    invocation_.task_args = {"/usr/bin/python3", "train.py", "a b"};
  }
  Invocation invocation_;
};

TEST_F(InnerTest, DefaultsGiveAPlainDirect) {
  EXPECT_EQ(Inner(Load({})), "direct -- run /usr/bin/python3 train.py 'a b'");
}

TEST_F(InnerTest, FlagsSetAndUnforwardedVariablesBecomeFlags) {
  config::LauncherSources sources;
  sources.flags = {{"direct.nproc_per_node", {"2"}, "--nproc-per-node"},
                   {"direct.env", {"FOO=bar baz"}, "--env"},
                   {"direct.patch", {"fix.sh"}, "--patch"},
                   {"direct.numa_bind", {"true"}, "--numa-bind"},
                   {"main.log_level", {"debug"}, "--log-level"}};
  sources.set_assignments = {"direct.heartbeat_interval=0.5", "direct.max_restarts=3"};
  sources.environment = Environment({{"PET_NNODES", "2"}, {"PRIMUS_DIRECT_NODE_RANK", "1"}});
  std::string inner = Inner(Load(sources), {"PRIMUS_DIRECT_NODE_RANK"});
  EXPECT_EQ(inner,
            "--set direct.heartbeat_interval=0.5 --log-level debug direct --nproc-per-node 2 --nnodes 2 "
            "--max-restarts 3 --env 'FOO=bar baz' --patch fix.sh --numa-bind -- run /usr/bin/python3 train.py 'a b'");
  EXPECT_EQ(inner.find("--node-rank"), std::string::npos) << "PRIMUS_DIRECT_NODE_RANK is forwarded: read inside";
}

TEST_F(InnerTest, AVariableThatIsNotForwardedIsPassedAsAFlag) {
  config::LauncherSources sources;
  sources.environment = Environment({{"PRIMUS_DIRECT_NODE_RANK", "1"}});
  EXPECT_EQ(Inner(Load(sources)), "direct --node-rank 1 -- run /usr/bin/python3 train.py 'a b'");
}

TEST_F(InnerTest, FileValuesStayInTheirFiles) {
  ScopedTempDir dir("inner");
  std::string file = dir.path() + "/launch.yaml";
  ASSERT_TRUE(WriteFileAtomic(file, "direct:\n  nproc_per_node: \"4\"\n  env:\n    FROM_FILE: x\n").ok());
  config::LauncherSources sources;
  sources.explicit_file = file;
  sources.flags = {{"direct.env", {"FROM_FLAG=y"}, "--env"}};
  EXPECT_EQ(Inner(Load(sources), {}, file),
            "--config " + file + " direct --env FROM_FLAG=y -- run /usr/bin/python3 train.py 'a b'");
}

TEST_F(InnerTest, TheSchedulersSettingsGoAsFlagsAndItIsNotDetectedAgain) {
  config::LauncherConfig plain = Load({});
  config::Value effective = plain.effective();
  config::SchedulerSettings slurm;
  slurm.scheduler = "slurm";
  slurm.job_id = "4711";
  for (auto [key, value, variable] : {std::tuple{"direct.nnodes", 2, "SLURM_STEP_NUM_NODES"},
                                      std::tuple{"direct.node_rank", 1, "SLURM_NODEID"},
                                      std::tuple{"direct.master_port", 29422, "SLURM_JOB_ID"}}) {
    ASSERT_TRUE(effective.Set(key, config::Value::Int(value, config::Origin::Scheduler("slurm", variable))).ok());
  }
  ASSERT_TRUE(effective.Set("direct.master_addr", config::Value::String("node1", config::Origin::Scheduler("slurm", "SLURM_STEP_NODELIST"))).ok());
  config::LauncherConfig launcher(effective, {}, slurm);
  EXPECT_EQ(Inner(launcher),
            "direct --platform none --nnodes 2 --node-rank 1 --master-addr node1 --master-port 29422 -- run "
            "/usr/bin/python3 train.py 'a b'");
}

TEST_F(InnerTest, AnExplicitInnerDirectsFlagsWithoutKeysGoToo) {
  static const OptionSpec standalone{{"--standalone"}, OptionSpec::Kind::kFlag, "", "", ""};
  ModeInvocation direct{"direct", "", {ParsedOption{&standalone, "--standalone", "true"}}, {}, {"--standalone"}};
  invocation_.chain.push_back(direct);
  EXPECT_EQ(Inner(Load({})), "direct --standalone -- run /usr/bin/python3 train.py 'a b'");
}

}  // namespace
}  // namespace primus::runtime
