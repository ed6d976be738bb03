#include "agent/worker_env.h"

#include <gtest/gtest.h>

#include <map>

namespace primus::agent {
namespace {

std::map<std::string, std::string> AsMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> map;
  for (const std::string& entry : env) {
    size_t equals = entry.find('=');
    EXPECT_TRUE(map.emplace(entry.substr(0, equals), entry.substr(equals + 1)).second)
        << "duplicate " << entry;
  }
  return map;
}

LaunchPlan Plan() {
  LaunchPlan plan;
  plan.spec.argv = {"python3", "train.py"};
  plan.spec.nproc_per_node = 4;
  plan.spec.nnodes = 2;
  plan.spec.node_rank = 1;
  plan.spec.master_addr = "10.1.2.3";
  plan.spec.master_port = 29511;
  plan.spec.run_id = "run42";
  plan.spec.max_restarts = 3;
  plan.spec.role = "trainer";
  plan.spec.env = {{"FROM_SPEC", "spec"}, {"ALREADY_SET", "spec"}};
  plan.host = "node1";
  plan.token = "abc123";
  plan.cpu_count = 16;
  return plan;
}

TEST(WorkerEnvTest, SetsTheTorchrunContractForStaticMultiNode) {
  LaunchPlan plan = Plan();
  const char* base[] = {"PATH=/usr/bin", nullptr};
  WorkerEnvironment environment(plan, base);
  auto env = AsMap(environment.For({2, 1, "/logs/err.json", "/logs/hb"}));
  std::map<std::string, std::string> expected = {
      {"RANK", "6"}, {"LOCAL_RANK", "2"}, {"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "4"},
      {"GROUP_RANK", "1"}, {"GROUP_WORLD_SIZE", "2"}, {"ROLE_NAME", "trainer"}, {"ROLE_RANK", "6"},
      {"ROLE_WORLD_SIZE", "8"}, {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "29511"},
      {"TORCHELASTIC_RESTART_COUNT", "1"}, {"TORCHELASTIC_MAX_RESTARTS", "3"},
      {"TORCHELASTIC_RUN_ID", "run42"}, {"TORCHELASTIC_USE_AGENT_STORE", "False"},
      {"TORCHELASTIC_ERROR_FILE", "/logs/err.json"}, {"NODE_RANK", "1"}, {"NNODES", "2"},
      {"PRIMUS_HEARTBEAT_FILE", "/logs/hb"}, {"PRIMUS_LAUNCH_TOKEN", "abc123"},
      {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"}, {"PYTHONUNBUFFERED", "1"}, {"OMP_NUM_THREADS", "4"},
      {"TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"}, {"TORCH_NCCL_DUMP_ON_TIMEOUT", "1"},
      {"PATH", "/usr/bin"}, {"FROM_SPEC", "spec"}, {"ALREADY_SET", "spec"},
  };
  EXPECT_EQ(env, expected);
}

TEST(WorkerEnvTest, VirtualLocalRankShowsEachWorkerOnlyItsDevice) {
  LaunchPlan plan = Plan();
  plan.spec.virtual_local_rank = true;
  const char* listed[] = {"CUDA_VISIBLE_DEVICES=4, 5,6,7", nullptr};
  WorkerEnvironment environment(plan, listed);
  auto env = AsMap(environment.For({1, 0, "/e", "/h"}));  // AsMap fails on a duplicate variable
  EXPECT_EQ(env["LOCAL_RANK"], "0");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "5");
  EXPECT_EQ(env["RANK"], "5");
  EXPECT_EQ(environment.VirtualDevice(4), "");  // the list is too short
  const char* none[] = {nullptr};
  WorkerEnvironment unlisted(plan, none);
  EXPECT_EQ(AsMap(unlisted.For({3, 0, "/e", "/h"}))["CUDA_VISIBLE_DEVICES"], "3");
}

TEST(WorkerEnvTest, FrameworkEnvForJaxAndTensorFlow) {
  LaunchPlan plan = Plan();  // node 1 of 2, 4 workers each
  plan.spec.framework_env = {"jax", "tensorflow"};
  plan.node_hosts = {"10.1.2.3", "10.1.2.4"};
  const char* base[] = {"TF_CONFIG={\"stale\": 1}", "JAX_PROCESS_ID=9", nullptr};
  WorkerEnvironment environment(plan, base);
  auto env = AsMap(environment.For({2, 0, "/e", "/h"}));  // AsMap fails on a duplicate
  EXPECT_EQ(env["JAX_COORDINATOR_ADDRESS"], "10.1.2.3:29511");
  EXPECT_EQ(env["JAX_NUM_PROCESSES"], "8");
  EXPECT_EQ(env["JAX_PROCESS_ID"], "6");
  EXPECT_EQ(env["JAX_PROCESS_INDEX"], "6");
  EXPECT_EQ(env.count("JAX_LOCAL_DEVICE_IDS"), 0u) << "no GPU known: one CPU device per process";
  EXPECT_EQ(env["TF_CONFIG"],
            "{\"cluster\": {\"worker\": [\"10.1.2.3:29513\",\"10.1.2.3:29514\",\"10.1.2.3:29515\",\"10.1.2.3:29516\","
            "\"10.1.2.4:29513\",\"10.1.2.4:29514\",\"10.1.2.4:29515\",\"10.1.2.4:29516\"]}, \"task\": {\"type\": "
            "\"worker\", \"index\": 6}}");
  // Not asked for: none of them, and the user's own are kept.
  LaunchPlan plain = Plan();
  WorkerEnvironment untouched(plain, base);
  auto kept = AsMap(untouched.For({2, 0, "/e", "/h"}));
  EXPECT_EQ(kept["TF_CONFIG"], "{\"stale\": 1}");
  EXPECT_EQ(kept.count("JAX_COORDINATOR_ADDRESS"), 0u);
}

TEST(WorkerEnvTest, NeverOverwritesTheUsersVariablesButOwnsTheDistributedOnes) {
  LaunchPlan plan = Plan();
  const char* base[] = {"ALREADY_SET=user",    "OMP_NUM_THREADS=7", "PYTHONUNBUFFERED=0",
                        "TORCH_NCCL_ASYNC_ERROR_HANDLING=0",        "RANK=1",
                        "WORLD_SIZE=2",        "MASTER_ADDR=10.1.2.3", nullptr};
  WorkerEnvironment environment(plan, base);
  auto env = AsMap(environment.For({0, 0, "e", "h"}));
  EXPECT_EQ(env["ALREADY_SET"], "user");
  EXPECT_EQ(env["OMP_NUM_THREADS"], "7");
  EXPECT_EQ(env["PYTHONUNBUFFERED"], "0");
  EXPECT_EQ(env["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "0");
  EXPECT_EQ(env["RANK"], "4");
  EXPECT_EQ(env["WORLD_SIZE"], "8");
  // Replaced with a different value: reported; the same value is not.
  std::vector<std::pair<std::string, std::string>> replaced = {{"RANK", "1"}, {"WORLD_SIZE", "2"}};
  EXPECT_EQ(environment.replaced(), replaced);
}

TEST(WorkerEnvTest, ExplicitOverridesReplaceTheAgentsEnvironment) {
  LaunchPlan plan = Plan();
  plan.spec.env_overrides = {{"NCCL_DEBUG", "INFO"}, {"NEW", "x"}};
  const char* base[] = {"NCCL_DEBUG=WARN", "OTHER=1", nullptr};
  auto env = AsMap(WorkerEnvironment(plan, base).For({0, 0, "e", "h"}));
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(env["NEW"], "x");
  EXPECT_EQ(env["OTHER"], "1");
}

// What the telemetry reads as the job's interface: the value the workers get,
// from --env, else the agent's environment, else the plan's defaults.
TEST(WorkerEnvTest, SharedValueIsWhatEveryWorkerGets) {
  LaunchPlan plan = Plan();
  plan.spec.env_overrides = {{"NCCL_SOCKET_IFNAME", "ib0"}};
  plan.spec.env["GLOO_SOCKET_IFNAME"] = "from-plan";
  plan.spec.env["NCCL_SOCKET_IFNAME_X"] = "a longer name";
  const char* base[] = {"NCCL_SOCKET_IFNAME=eth9", "ALREADY_SET=agent", nullptr};
  WorkerEnvironment workers(plan, base);
  auto env = AsMap(workers.For({0, 0, "e", "h"}));
  EXPECT_EQ(workers.SharedValue("NCCL_SOCKET_IFNAME"), "ib0");
  EXPECT_EQ(workers.SharedValue("NCCL_SOCKET_IFNAME"), env["NCCL_SOCKET_IFNAME"]);
  EXPECT_EQ(workers.SharedValue("GLOO_SOCKET_IFNAME"), "from-plan");
  EXPECT_EQ(workers.SharedValue("ALREADY_SET"), "agent");
  EXPECT_EQ(workers.SharedValue("NCCL_SOCKET"), "");  // a prefix of a name is not that name
  EXPECT_EQ(workers.SharedValue("MASTER_PORT"), "29511");
  EXPECT_EQ(workers.SharedValue("UNSET_ANYWHERE"), "");
}

TEST(WorkerEnvTest, OmpThreadsShareTheCpus) {
  LaunchPlan plan = Plan();
  plan.cpu_count = 2;
  const char* base[] = {nullptr};
  EXPECT_EQ(AsMap(WorkerEnvironment(plan, base).For({0, 0, "e", "h"}))["OMP_NUM_THREADS"], "1");
  plan.spec.nproc_per_node = 1;
  EXPECT_EQ(AsMap(WorkerEnvironment(plan, base).For({0, 0, "e", "h"}))["OMP_NUM_THREADS"], "2");
}

TEST(WorkerEnvTest, TorchrunsOmpRuleIsOneForSeveralWorkersAndNothingForOne) {
  LaunchPlan plan = Plan();
  plan.spec.omp_threads = LaunchSpec::OmpThreads::kTorchrun;
  plan.spec.placements = {{{0, 1, 2}, 3}, {{3, 4, 5}, 3}, {{}, 0}, {{6}, 1}};  // bound or not: still 1
  const char* base[] = {nullptr};
  WorkerEnvironment environment(plan, base);
  for (int local_rank = 0; local_rank < 4; ++local_rank) {
    EXPECT_EQ(AsMap(environment.For({local_rank, 0, "e", "h"}))["OMP_NUM_THREADS"], "1");
  }
  const char* user[] = {"OMP_NUM_THREADS=7", nullptr};
  EXPECT_EQ(AsMap(WorkerEnvironment(plan, user).For({0, 0, "e", "h"}))["OMP_NUM_THREADS"], "7");
  plan.spec.nproc_per_node = 1;
  plan.spec.placements.clear();
  EXPECT_EQ(AsMap(WorkerEnvironment(plan, base).For({0, 0, "e", "h"})).count("OMP_NUM_THREADS"), 0u);
}

TEST(WorkerEnvTest, BoundRanksGetTheirOwnOmpThreadsUnlessTheUserSetThem) {
  LaunchPlan plan = Plan();
  plan.spec.placements = {{{0, 1, 2}, 3}, {{3, 4, 5}, 3}, {{}, 0}, {{6}, 1}};
  const char* base[] = {nullptr};
  WorkerEnvironment environment(plan, base);
  EXPECT_EQ(AsMap(environment.For({0, 0, "e", "h"}))["OMP_NUM_THREADS"], "3");
  EXPECT_EQ(AsMap(environment.For({3, 0, "e", "h"}))["OMP_NUM_THREADS"], "1");
  EXPECT_EQ(AsMap(environment.For({2, 0, "e", "h"}))["OMP_NUM_THREADS"], "4");  // not bound: 16 CPUs / 4

  const char* user[] = {"OMP_NUM_THREADS=7", nullptr};
  EXPECT_EQ(AsMap(WorkerEnvironment(plan, user).For({0, 0, "e", "h"}))["OMP_NUM_THREADS"], "7");
  plan.spec.env_overrides = {{"OMP_NUM_THREADS", "5"}};
  EXPECT_EQ(AsMap(WorkerEnvironment(plan, base).For({0, 0, "e", "h"}))["OMP_NUM_THREADS"], "5");
  plan.spec.env_overrides.clear();
  plan.spec.env = {{"OMP_NUM_THREADS", "6"}};
  EXPECT_EQ(AsMap(WorkerEnvironment(plan, base).For({0, 0, "e", "h"}))["OMP_NUM_THREADS"], "6");
}

TEST(WorkerEnvTest, AgentOwnedNames) {
  EXPECT_TRUE(IsAgentOwnedVariable("RANK"));
  EXPECT_TRUE(IsAgentOwnedVariable("TORCHELASTIC_ERROR_FILE"));
  EXPECT_FALSE(IsAgentOwnedVariable("OMP_NUM_THREADS"));
  EXPECT_FALSE(IsAgentOwnedVariable("RANKS"));
}

}  // namespace
}  // namespace primus::agent

namespace primus::agent {
namespace {

// The job token lets an agent join the job's control channel: the agent
// reads it, no worker gets it, wherever it came from.
TEST(WorkerEnvTest, TheJobTokenNeverReachesAWorker) {
  LaunchPlan plan = Plan();
  plan.spec.env["PRIMUS_JOB_TOKEN"] = "from-spec";
  plan.spec.env_overrides["PRIMUS_JOB_TOKEN"] = "from-env-flag";
  const char* base[] = {"PRIMUS_JOB_TOKEN=0123456789abcdef", "HF_TOKEN=kept", nullptr};
  WorkerEnvironment environment(plan, base);
  auto env = AsMap(environment.For({0, 0, "/logs/err.json", "/logs/hb"}));
  EXPECT_EQ(env.count("PRIMUS_JOB_TOKEN"), 0u);
  EXPECT_EQ(env["HF_TOKEN"], "kept") << "the user's own secrets are the user's to pass";
}

}  // namespace
}  // namespace primus::agent

namespace primus::agent {
namespace {

TEST(WorkerEnvTest, EachWorkerGetsItsMetricsFileUnlessTheUserSetOne) {
  LaunchPlan plan = Plan();
  const char* base[] = {"PATH=/usr/bin", nullptr};
  WorkerEnvironment environment(plan, base);
  EXPECT_FALSE(environment.user_metrics_file());
  auto env = AsMap(environment.For({1, 0, "e", "h", "/logs/attempt_0/node1.rank5.metrics.jsonl"}));
  EXPECT_EQ(env["PRIMUS_METRICS_FILE"], "/logs/attempt_0/node1.rank5.metrics.jsonl");

  const char* user[] = {"PRIMUS_METRICS_FILE=/mine/metrics.jsonl", nullptr};
  WorkerEnvironment theirs(plan, user);
  EXPECT_TRUE(theirs.user_metrics_file());
  env = AsMap(theirs.For({1, 0, "e", "h", "/logs/attempt_0/node1.rank5.metrics.jsonl"}));
  EXPECT_EQ(env["PRIMUS_METRICS_FILE"], "/mine/metrics.jsonl");

  plan.spec.env_overrides["PRIMUS_METRICS_FILE"] = "/from/env/flag.jsonl";  // --env counts as the user's
  WorkerEnvironment flagged(plan, base);
  EXPECT_TRUE(flagged.user_metrics_file());
  EXPECT_EQ(AsMap(flagged.For({0, 0, "e", "h", "/x"}))["PRIMUS_METRICS_FILE"], "/from/env/flag.jsonl");
}

// PyTorch's flight recorder: on with its dump and debug pipe in the attempt
// directory, and every variable the user set kept (then read from theirs).
TEST(WorkerEnvTest, FlightRecorderIsOnUnlessTheUserSaidOtherwise) {
  LaunchPlan plan = Plan();
  const char* base[] = {"PATH=/usr/bin", nullptr};
  WorkerEnvironment ours(plan, base);
  WorkerSlot slot{1, 0, "e", "h"};
  slot.flight_prefix = "/logs/attempt_0/nccl_trace_rank_";
  auto env = AsMap(ours.For(slot));
  EXPECT_EQ(env["TORCH_NCCL_TRACE_BUFFER_SIZE"], "2000");
  EXPECT_EQ(env["TORCH_NCCL_DUMP_ON_TIMEOUT"], "1");
  EXPECT_EQ(env["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"], "/logs/attempt_0/nccl_trace_rank_");
  EXPECT_EQ(env["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"], "/logs/attempt_0/nccl_trace_rank_");
  EXPECT_EQ(ours.FlightDumpFile(slot.flight_prefix, 5), "/logs/attempt_0/nccl_trace_rank_5");
  EXPECT_EQ(ours.FlightPipeFile(slot.flight_prefix, 5), "/logs/attempt_0/nccl_trace_rank_5.pipe");

  const char* user[] = {"TORCH_NCCL_DUMP_ON_TIMEOUT=0", "TORCH_FR_DUMP_TEMP_FILE=/mine/fr_", nullptr};
  WorkerEnvironment theirs(plan, user);
  env = AsMap(theirs.For(slot));
  EXPECT_EQ(env["TORCH_NCCL_DUMP_ON_TIMEOUT"], "0");
  EXPECT_EQ(env["TORCH_FR_DUMP_TEMP_FILE"], "/mine/fr_");
  EXPECT_EQ(env.count("TORCH_NCCL_DEBUG_INFO_TEMP_FILE"), 0u);
  EXPECT_EQ(theirs.FlightDumpFile(slot.flight_prefix, 5), "/mine/fr_5");

  const char* off[] = {"TORCH_NCCL_TRACE_BUFFER_SIZE=0", nullptr};
  WorkerEnvironment disabled(plan, off);
  EXPECT_EQ(AsMap(disabled.For(slot))["TORCH_NCCL_TRACE_BUFFER_SIZE"], "0");
  EXPECT_EQ(disabled.FlightDumpFile(slot.flight_prefix, 5), "");

  plan.spec.flight_recorder = false;  // direct.flight_recorder=false
  env = AsMap(WorkerEnvironment(plan, base).For(slot));
  EXPECT_EQ(env.count("TORCH_NCCL_TRACE_BUFFER_SIZE"), 0u);
  EXPECT_EQ(env.count("TORCH_NCCL_DEBUG_INFO_PIPE_FILE"), 0u);
}

}  // namespace
}  // namespace primus::agent
