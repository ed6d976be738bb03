// `preflight` through the real binary. PreflightTest: this machine, the
// fixture hosts of the platform issue (8x MI300X healthy, with a degraded
// PCIe link, with RAS errors; an H200 host with an InfiniBand port down; a
// GPU-less host), --json, --output and --report, a fake VCCL libnccl found through
// LD_LIBRARY_PATH, argument errors, and train stopped by the fast subset
// (milliseconds each). PreflightHostsTest: three hosts as network
// namespaces, node 0 gathering every node over MASTER_PORT; one host made bad
// (a wrong GLOO_SOCKET_IFNAME; MASTER_PORT taken on node 0) lands in
// failing_nodes.txt while the others land in passing_nodes.txt.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "netns_hosts.h"
#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus {
namespace {

using testing::HostProcess;
using testing::NetnsHosts;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;

const std::string kSource = PRIMUS_SOURCE_DIR;

class PreflightTest : public ::testing::Test {
 protected:
  ProcessOptions Options(const std::string& fixture = "") const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    for (const char* name : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_IB_HCA"}) options.env[name] = std::nullopt;
    if (!fixture.empty()) {
      std::string root = kSource + "/tests/fixtures/hosts/" + fixture;
      options.env["PRIMUS_SYSFS_ROOT"] = root + "/sys";
      options.env["PRIMUS_PROCFS_ROOT"] = root + "/proc";
      options.env["PRIMUS_ETC_ROOT"] = root + "/etc";
    }
    return options;
  }
  ProcessResult Preflight(const std::string& fixture, std::vector<std::string> args) {
    args.insert(args.begin(), "preflight");
    return RunPrimus(args, Options(fixture));
  }
  testing::TempDir dir_;
};

// Every check line has a status; the verdict line agrees with the exit code.
TEST_F(PreflightTest, ThisMachineGetsAVerdictThatMatchesItsExitCode) {
  ProcessResult result = Preflight("", {"check", "--host", "--gpu", "--network"});
  ASSERT_TRUE(result.exit_code == 0 || result.exit_code == 1) << result.all();
  EXPECT_NE(result.out.find("  host  /dev/shm"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("  host  memlock"), std::string::npos) << result.out;
  bool failed = result.out.find("\nFAIL: ") != std::string::npos;
  EXPECT_EQ(failed, result.exit_code == 1) << result.out;
  for (const std::string& line : Split(result.out, '\n')) {
    if (line.starts_with("  ") && !line.starts_with("        fix:")) {
      std::string status = line.substr(2, 4);
      EXPECT_TRUE(status == "PASS" || status == "WARN" || status == "FAIL" || status == "SKIP") << line;
    }
  }
}

TEST_F(PreflightTest, FixtureHostsEachGetTheirDiagnosis) {
  ProcessResult healthy = Preflight("mi300x-8", {"--gpu", "--expect-gpus", "8", "--expect-model", "MI300X"});
  EXPECT_EQ(healthy.exit_code, 0) << healthy.all();
  EXPECT_NE(healthy.out.find("PASS  gpu  xgmi"), std::string::npos) << healthy.out;
  // Host settings from the fixture's procfs (limits are this process's own).
  ProcessResult host = Preflight("mi300x-8", {"--host"});
  EXPECT_NE(host.out.find("PASS  host  iommu=pt"), std::string::npos) << host.out;
  EXPECT_NE(host.out.find("PASS  host  numa_balancing"), std::string::npos) << host.out;
  EXPECT_NE(healthy.out.find("WARN  gpu  processes GPU0"), std::string::npos) << healthy.out;  // pids 4242, 5151 in KFD

  ProcessResult pcie = Preflight("mi300x-8-degraded-pcie", {"--gpu"});
  EXPECT_EQ(pcie.exit_code, 1) << pcie.all();
  EXPECT_NE(pcie.out.find("FAIL  gpu  pcie GPU5"), std::string::npos) << pcie.out;
  EXPECT_NE(pcie.out.find("x8 16.0 GT/s PCIe  (expected x16 32.0 GT/s PCIe)"), std::string::npos) << pcie.out;

  ProcessResult ras = Preflight("mi300x-8-ras", {"--gpu"});
  EXPECT_EQ(ras.exit_code, 1) << ras.all();
  EXPECT_NE(ras.out.find("FAIL  gpu  ecc GPU3"), std::string::npos) << ras.out;

  ProcessResult ib = Preflight("h200-8", {"--network"});
  EXPECT_EQ(ib.exit_code, 1) << ib.all();
  EXPECT_NE(ib.out.find("FAIL  network  rdma mlx5_3:1"), std::string::npos) << ib.out;
  EXPECT_NE(ib.out.find("ibstat mlx5_3"), std::string::npos) << ib.out;

  ProcessResult cpu = Preflight("cpu-only", {"--gpu"});
  EXPECT_EQ(cpu.exit_code, 0) << cpu.all();
  EXPECT_NE(cpu.out.find("SKIP  gpu  count"), std::string::npos) << cpu.out;
  ProcessResult cpu_expected = Preflight("cpu-only", {"--gpu", "--expect-gpus", "8"});
  EXPECT_EQ(cpu_expected.exit_code, 1) << cpu_expected.all();
  EXPECT_NE(cpu_expected.out.find("FAIL  gpu  count"), std::string::npos) << cpu_expected.out;
}

TEST_F(PreflightTest, JsonAndNodeListsOnOneNode) {
  ProcessResult result = Preflight("mi300x-8-ras", {"--gpu", "--output", "out/preflight.json", "--report", "out"});
  EXPECT_EQ(result.exit_code, 1) << result.all();
  auto json = nlohmann::json::parse(*ReadFile(dir_.path() + "/out/preflight.json"));
  EXPECT_EQ(json["status"], "FAIL");
  EXPECT_EQ(json["nodes"][0]["host"], "mi300x-node01");
  EXPECT_EQ(*ReadFile(dir_.path() + "/out/failing_nodes.txt"), "mi300x-node01\n");
  EXPECT_EQ(*ReadFile(dir_.path() + "/out/passing_nodes.txt"), "");
  EXPECT_NE(result.out.find("FAIL  gpu  "), std::string::npos) << "text on stdout: " << result.out;
}

// --json is JSON on stdout (and nothing else there); --output FILE the file.
TEST_F(PreflightTest, JsonOnStdout) {
  ProcessResult result = Preflight("mi300x-8-ras", {"--gpu", "--json", "--report", "out"});
  EXPECT_EQ(result.exit_code, 1) << result.all();
  auto json = nlohmann::json::parse(result.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << result.out;
  EXPECT_EQ(json["status"], "FAIL");
  EXPECT_EQ(json["nodes"][0]["host"], "mi300x-node01");
  EXPECT_NE(result.err.find("wrote out/failing_nodes.txt"), std::string::npos) << result.err;
}

// The old spelling `--json FILE` still writes the file, and says what to write now.
TEST_F(PreflightTest, OldJsonFileSpellingWorksWithADeprecationNote) {
  for (std::vector<std::string> old : {std::vector<std::string>{"--json", "old.json"}, {"--json=old.json"}}) {
    std::filesystem::remove(dir_.path() + "/old.json");
    std::vector<std::string> args = {"--gpu"};
    args.insert(args.end(), old.begin(), old.end());
    ProcessResult result = Preflight("mi300x-8-ras", args);
    EXPECT_EQ(result.exit_code, 1) << result.all();
    auto text = ReadFile(dir_.path() + "/old.json");
    auto json = nlohmann::json::parse(text.ok() ? *text : "", nullptr, false);
    EXPECT_FALSE(json.is_discarded()) << result.all();
    EXPECT_NE(result.err.find("--json FILE is deprecated: use --output FILE (and --json for JSON on standard output)"),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.out.find("FAIL  gpu  "), std::string::npos) << "text on stdout, as before: " << result.out;
  }
}

// A custom NCCL build is found the way workers find it: LD_LIBRARY_PATH.
TEST_F(PreflightTest, VcclBuildIsRecognisedThroughLdLibraryPath) {
  ProcessOptions options = Options("h100-8");
  options.env["LD_LIBRARY_PATH"] = std::string(PRIMUS_BINARY_DIR) + "/test-libs/vccl";
  ProcessResult result = RunPrimus({"preflight", "--software", "--python", "/usr/bin/python3"}, options);
  EXPECT_NE(result.out.find("collective library NCCL 2.26.6 (VCCL build) at "), std::string::npos) << result.all();
  // Without it: the loader's own NCCL if the machine has one (never called
  // VCCL), else a failure naming NCCL.
  ProcessResult plain = Preflight("h100-8", {"--software", "--python", "/usr/bin/python3"});
  EXPECT_NE(plain.out.find("software  collective library NCCL "), std::string::npos) << plain.all();
  EXPECT_EQ(plain.out.find("VCCL"), std::string::npos) << plain.out;
  bool found = plain.out.find("PASS  software  collective library") != std::string::npos;
  EXPECT_EQ(plain.exit_code, found ? 0 : 1) << plain.all();
}

// --config EXP: the experiment's own interpreter is the one checked.
TEST_F(PreflightTest, ExperimentNamesTheInterpreter) {
  ProcessOptions options = Options();
  options.env["PATH"] = "/nonexistent";  // python3 on PATH would not be found
  options.cwd = kSource;                  // the experiment names its script relative to the repository
  ProcessResult result = RunPrimus({"preflight", "--config", kSource + "/examples/gpt/configs/tiny-cpu.yaml"}, options);
  EXPECT_NE(result.out.find("software  torch"), std::string::npos) << result.all();
  EXPECT_NE(result.out.find("(/usr/bin/python3)"), std::string::npos) << result.out;
  ProcessResult missing = RunPrimus({"preflight", "--config", "nope.yaml"}, Options());
  EXPECT_EQ(missing.exit_code, 3) << missing.all();
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos) << missing.err;
}

TEST_F(PreflightTest, ArgumentErrorsNameTheFlag) {
  ProcessResult unknown = Preflight("", {"--gpus"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.all();
  EXPECT_NE(unknown.err.find("--gpu"), std::string::npos) << unknown.err;
  ProcessResult count = Preflight("", {"--expect-gpus", "eight"});
  EXPECT_EQ(count.exit_code, 2) << count.all();
  EXPECT_NE(count.err.find("--expect-gpus must be a number"), std::string::npos) << count.err;
}

// The fast subset runs before every train launch: a doomed job stops before
// its experiment directory exists, with the fix; --dry-run only says so.
TEST_F(PreflightTest, TrainIsStoppedBeforeItStarts) {
  ProcessOptions options = Options();
  options.cwd = kSource;
  options.env["GLOO_SOCKET_IFNAME"] = "bogus0";
  std::string workspace = "workspace=" + dir_.path() + "/ws";
  ProcessResult stopped = RunPrimus({"direct", "--", "train", "pretrain", "--config",
                                     kSource + "/examples/gpt/configs/tiny-cpu.yaml", workspace},
                                    options);
  EXPECT_EQ(stopped.exit_code, 4) << stopped.all();
  EXPECT_NE(stopped.err.find("preflight stopped the launch"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("GLOO_SOCKET_IFNAME=bogus0 selects no interface"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("--no-preflight"), std::string::npos) << stopped.err;
  EXPECT_FALSE(PathExists(dir_.path() + "/ws")) << "no experiment directory for a job that never started";
  ProcessResult dry = RunPrimus({"--dry-run", "direct", "--", "train", "pretrain", "--config",
                                 kSource + "/examples/gpt/configs/tiny-cpu.yaml", "--no-preflight"},
                                options);
  EXPECT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("preflight: off"), std::string::npos) << dry.out;
}

// Turned off (--no-preflight, or train.preflight: false), the same bad
// interface name is not caught before the launch: the experiment directory
// exists and whatever happens next is the job's own doing. Real torch: slow.
TEST_F(PreflightTest, TrainLaunchesWithPreflightOff) {
  ProcessOptions options = Options();
  options.cwd = kSource;
  options.env["GLOO_SOCKET_IFNAME"] = "bogus0";
  std::string config = kSource + "/examples/gpt/configs/tiny-cpu.yaml";
  struct Way {
    std::vector<std::string> before_task;
    std::vector<std::string> after_config;
    std::string dir;
  };
  for (const Way& way : {Way{{}, {"--no-preflight"}, "ws-flag"}, Way{{"--set", "train.preflight=false"}, {}, "ws-config"}}) {
    std::vector<std::string> argv = way.before_task;
    for (const char* word : {"direct", "--", "train", "pretrain", "--config"}) argv.push_back(word);
    argv.push_back(config);
    argv.push_back("workspace=" + dir_.path() + "/" + way.dir);
    argv.push_back("training.steps=1");
    for (const std::string& extra : way.after_config) argv.push_back(extra);
    ProcessResult launched = RunPrimus(argv, options);
    EXPECT_EQ(launched.err.find("preflight stopped the launch"), std::string::npos) << launched.all();
    EXPECT_TRUE(PathExists(dir_.path() + "/" + way.dir)) << way.dir << ": the launch went ahead\n" << launched.all();
  }
}

// ---- several hosts ----

class PreflightHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto hosts = NetnsHosts::Create(3);
    ASSERT_TRUE(hosts.ok()) << hosts.error().Format();
    hosts_ = std::move(*hosts);
  }
  // A host's process options: the shared directory as home and working
  // directory, gloo on the namespace's eth0, and `env` on top.
  ProcessOptions HostOptions(const std::map<std::string, std::string>& env = {}) const {
    ProcessOptions options;
    options.cwd = hosts_->dir();
    options.env["HOME"] = hosts_->dir();
    options.env["GLOO_SOCKET_IFNAME"] = "eth0";
    for (const auto& [key, value] : env) options.env[key] = value;
    return options;
  }
  // Node `host - 1` of 3, node 0 on host1; returns the started process.
  HostProcess Start(int host, const std::map<std::string, std::string>& env, int port) {
    ProcessOptions options = HostOptions(env);
    return hosts_->Start(host, {PRIMUS_BINARY, "direct", "--nnodes", "3", "--node-rank", std::to_string(host - 1),
                                "--master-addr", hosts_->Address(1), "--master-port", std::to_string(port), "--",
                                "preflight", "--host", "--network", "--report", hosts_->dir() + "/report", "--timeout",
                                "20"},
                         options);
  }
  std::unique_ptr<NetnsHosts> hosts_;
};

TEST_F(PreflightHostsTest, ABadInterfaceNameOnOneHostLandsInFailingNodes) {
  HostProcess node0 = Start(1, {}, 29500);
  HostProcess node1 = Start(2, {}, 29500);
  HostProcess node2 = Start(3, {{"GLOO_SOCKET_IFNAME", "ib0"}}, 29500);
  EXPECT_EQ(node0.Wait(30), 1) << node0.All();
  EXPECT_EQ(node1.Wait(10), 0) << node1.All();
  EXPECT_EQ(node2.Wait(10), 1) << node2.All();
  EXPECT_EQ(*ReadFile(hosts_->dir() + "/report/passing_nodes.txt"), "host1\nhost2\n");
  EXPECT_EQ(*ReadFile(hosts_->dir() + "/report/failing_nodes.txt"), "host3\n");
  EXPECT_NE(node0.Out().find("GLOO_SOCKET_IFNAME=ib0 selects no interface"), std::string::npos) << node0.Out();
  EXPECT_NE(node0.Out().find("FAIL node 2 (host3): network GLOO_SOCKET_IFNAME"), std::string::npos) << node0.Out();
  EXPECT_NE(node0.Out().find("preflight of 3 node(s)"), std::string::npos) << node0.Out();
  EXPECT_NE(node1.Out().find("node 0 judged the job: FAIL"), std::string::npos) << node1.Out();
}

// Primus's inter-node tests: our comm benchmark across the three hosts
// (gloo, one worker per CPU host), node 0 reporting the bandwidth.
TEST_F(PreflightHostsTest, InterNodeCollectivesRunBetweenTheHosts) {
  std::vector<HostProcess> nodes;
  for (int host = 1; host <= 3; ++host) {
    ProcessOptions options = HostOptions({{"PRIMUS_JOB_TOKEN", "0123456789abcdef0123456789abcdef"}});
    nodes.push_back(hosts_->Start(
        host, {PRIMUS_BINARY, "direct", "--nnodes", "3", "--node-rank", std::to_string(host - 1), "--master-addr",
               hosts_->Address(1), "--master-port", "29600", "--", "preflight", "--tests",
               "inter-allreduce,inter-ring-p2p", "--inter-comm-sizes-mb", "1", "--ring-p2p-sizes-mb", "1,2",
               "--comm-cleanup-delay-sec", "0.5", "--dist-timeout-sec", "60", "--report", hosts_->dir() + "/inter"},
        options));
  }
  EXPECT_EQ(nodes[0].Wait(240), 0) << nodes[0].All();
  EXPECT_EQ(nodes[1].Wait(30), 0) << nodes[1].All();
  EXPECT_EQ(nodes[2].Wait(30), 0) << nodes[2].All();
  const std::string out = nodes[0].Out();
  EXPECT_NE(out.find("inter-allreduce 1 MiB"), std::string::npos) << out;
  EXPECT_NE(out.find("inter-ring-p2p 2 MiB"), std::string::npos) << out;
  EXPECT_NE(out.find("GB/s bus bandwidth across 3 nodes x 1 gloo worker, results checked"), std::string::npos) << out;
  EXPECT_NE(nodes[1].Out().find("took part (3 nodes x 1 gloo worker)"), std::string::npos) << nodes[1].Out();
  EXPECT_EQ(*ReadFile(hosts_->dir() + "/inter/passing_nodes.txt"), "host1\nhost2\nhost3\n");
}

// Pods of the seeds' commercial platforms: WORLD_SIZE nodes, RANK the node
// index, MASTER_ADDR/MASTER_PORT; no flags at all.
TEST_F(PreflightHostsTest, PlatformPodsFindEachOtherFromTheirEnvironment) {
  std::vector<HostProcess> nodes;
  for (int host = 1; host <= 3; ++host) {
    ProcessOptions options = HostOptions({{"WORLD_SIZE", "3"},
                                          {"RANK", std::to_string(host - 1)},
                                          {"MASTER_ADDR", hosts_->Address(1)},
                                          {"MASTER_PORT", "29700"}});
    nodes.push_back(hosts_->Start(host, {PRIMUS_BINARY, "direct", "--", "preflight", "--network", "--report",
                                         hosts_->dir() + "/pods"},
                                  options));
  }
  EXPECT_EQ(nodes[0].Wait(30), 0) << nodes[0].All();
  EXPECT_EQ(nodes[1].Wait(10), 0) << nodes[1].All();
  EXPECT_EQ(nodes[2].Wait(10), 0) << nodes[2].All();
  EXPECT_EQ(*ReadFile(hosts_->dir() + "/pods/passing_nodes.txt"), "host1\nhost2\nhost3\n");
  // Node 0's summary shows what it measured to each pod.
  EXPECT_NE(nodes[0].Out().find("ms round trip, "), std::string::npos) << nodes[0].Out();
  EXPECT_NE(nodes[0].Out().find(" GB/s"), std::string::npos) << nodes[0].Out();
}

TEST_F(PreflightHostsTest, MasterPortTakenOnNodeZeroFailsItButTheOthersStillReport) {
  std::string server =
      "import socket, time\n"
      "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      "s.bind(('0.0.0.0', 29600)); s.listen(8)\n"
      "open('" + hosts_->dir() + "/listening', 'w').close()\n"
      "time.sleep(60)\n";
  HostProcess holder = hosts_->Start(1, {"/usr/bin/python3", "-c", server});
  for (int i = 0; i < 200 && !PathExists(hosts_->dir() + "/listening"); ++i) usleep(20000);
  ASSERT_TRUE(PathExists(hosts_->dir() + "/listening")) << holder.Err();
  HostProcess node0 = Start(1, {}, 29600);
  HostProcess node1 = Start(2, {}, 29600);
  HostProcess node2 = Start(3, {}, 29600);
  EXPECT_EQ(node0.Wait(30), 1) << node0.All();
  EXPECT_EQ(node1.Wait(10), 0) << node1.All();
  EXPECT_EQ(node2.Wait(10), 0) << node2.All();
  EXPECT_NE(node0.Out().find("FAIL  network  MASTER_PORT"), std::string::npos) << node0.Out();
  EXPECT_EQ(*ReadFile(hosts_->dir() + "/report/failing_nodes.txt"), "host1\n");
  EXPECT_EQ(*ReadFile(hosts_->dir() + "/report/passing_nodes.txt"), "host2\nhost3\n");
  holder.Kill(SIGKILL);
}

}  // namespace
}  // namespace primus
