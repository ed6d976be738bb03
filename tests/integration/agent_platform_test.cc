// The node agent with the platform layer, through the real binary
// (`primus-cli direct ... -- run CMD`): --dry-run explains the worker
// environment (profile chain, every variable with its origin) and the layout;
// a real run's workers get exactly that; --nproc-per-node auto counts the
// GPUs of the detected host (fixture trees through PRIMUS_SYSFS_ROOT and
// friends); --numa-bind really binds each worker.
#include <gtest/gtest.h>
#include <sched.h>

#include <regex>
#include <string>
#include <vector>

#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus {
namespace {

using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunPrimus;
using testing::TempDir;

std::string Fixture(const std::string& host) {
  return std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/" + host;
}

class AgentPlatformTest : public ::testing::Test {
 protected:
  // A clean environment: nothing from the test runner's shell leaks into the plan.
  ProcessOptions Options() const {
    ProcessOptions options;
    options.clear_env = true;
    options.cwd = dir_.path();
    options.env["PATH"] = "/usr/bin:/bin";
    options.env["HOME"] = dir_.path();
    options.env["NO_COLOR"] = "1";
    return options;
  }
  // Detection reads the tree under `root` (sys/, proc/, etc/).
  ProcessOptions OnTree(const std::string& root) const {
    ProcessOptions options = Options();
    options.env["PRIMUS_SYSFS_ROOT"] = root + "/sys";
    options.env["PRIMUS_PROCFS_ROOT"] = root + "/proc";
    options.env["PRIMUS_ETC_ROOT"] = root + "/etc";
    return options;
  }
  ProcessResult DryRun(const std::vector<std::string>& flags, const ProcessOptions& options) const {
    std::vector<std::string> args = {"--dry-run", "direct"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "run", "/bin/touch", dir_.path() + "/ran"});
    return RunPrimus(args, options);
  }
  ProcessResult Run(const std::vector<std::string>& flags, const std::string& script,
                    const ProcessOptions& options) const {
    std::vector<std::string> args = {"direct", "--log-dir", dir_.path() + "/logs", "--console-prefix", "{rank}: "};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "run", "/bin/sh", "-c", script});
    return RunPrimus(args, options);
  }
  // "NAME=VALUE <spaces> ORIGIN" on one line of the plan.
  static bool PlanHas(const std::string& out, const std::string& assignment, const std::string& origin) {
    for (const std::string& line : Split(out, '\n')) {
      size_t at = line.find(" " + assignment + " ");
      if (at != std::string::npos && Trim(line.substr(at + assignment.size() + 1)) == origin) return true;
    }
    return false;
  }
  TempDir dir_;
};

TEST_F(AgentPlatformTest, DryRunExplainsTheEnvironmentAndLayoutAndRunsNothing) {
  ProcessResult result = DryRun({}, Options());
  EXPECT_EQ(result.exit_code, 0) << result.all();
  // This machine: one node, no master address -> loopback.
  EXPECT_TRUE(PlanHas(result.out, "NCCL_SOCKET_IFNAME=lo", "network auto-config")) << result.out;
  EXPECT_TRUE(std::regex_search(result.out, std::regex("\\n {10}NCCL_SOCKET_IFNAME=lo +network auto-config\\n")))
      << result.out;
  EXPECT_TRUE(PlanHas(result.out, "CUDA_DEVICE_MAX_CONNECTIONS=1", "profiles/base.env:7")) << result.out;
  EXPECT_NE(result.out.find("\nprofiles  profiles/base.env > "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("world: 1 node x 1 worker = world size 1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("master: 127.0.0.1, free port chosen at launch"), std::string::npos);
  EXPECT_NE(result.out.find("worker command (once per local rank): /bin/touch " + dir_.path() + "/ran"),
            std::string::npos);
  EXPECT_FALSE(PathExists(dir_.path() + "/ran")) << "--dry-run executes nothing";
  EXPECT_EQ(result.err.find("not implemented"), std::string::npos) << result.err;

  ProcessResult multi = DryRun({"--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1",
                                "--master-port", "29511", "--nproc-per-node", "3"},
                               Options());
  EXPECT_EQ(multi.exit_code, 0) << multi.all();
  EXPECT_NE(multi.out.find("world: 2 nodes x 3 workers = world size 6; this node is node rank 1 (global ranks 3-5)"),
            std::string::npos)
      << multi.out;
  EXPECT_NE(multi.out.find("master: 127.0.0.1:29511"), std::string::npos);
}

TEST_F(AgentPlatformTest, AutoCountsTheFixtureGpusAndShowsTheModelsProfileChain) {
  ProcessResult mi300x = DryRun({"--nproc-per-node", "auto"}, OnTree(Fixture("mi300x-8")));
  EXPECT_EQ(mi300x.exit_code, 0) << mi300x.all();
  EXPECT_NE(mi300x.out.find("1 node x 8 workers"), std::string::npos) << mi300x.out;
  EXPECT_NE(mi300x.out.find("profiles  profiles/base.env > profiles/vendor/amd.env > profiles/arch/gfx942.env > "
                            "profiles/model/MI300X.env\n"),
            std::string::npos)
      << mi300x.out;
  EXPECT_TRUE(PlanHas(mi300x.out, "HSA_XNACK=0", "profiles/model/MI300X.env:3")) << mi300x.out;

  ProcessResult h100 = DryRun({}, OnTree(Fixture("h100-8")));  // auto is the default
  EXPECT_EQ(h100.exit_code, 0) << h100.all();
  EXPECT_NE(h100.out.find("1 node x 8 workers"), std::string::npos) << h100.out;
  EXPECT_NE(h100.out.find("profiles/arch/sm90.env > model/H100 (no file)"), std::string::npos) << h100.out;

  // The user's CUDA_VISIBLE_DEVICES is respected...
  ProcessOptions two_visible = OnTree(Fixture("h100-8"));
  two_visible.env["CUDA_VISIBLE_DEVICES"] = "1,3";
  ProcessResult visible = DryRun({}, two_visible);
  EXPECT_NE(visible.out.find("1 node x 2 workers"), std::string::npos) << visible.out;
  // ...and never written: the workers get it as the user set it, and nothing else.
  ProcessResult run = Run({}, "echo \"[$CUDA_VISIBLE_DEVICES][$HIP_VISIBLE_DEVICES][${ROCR_VISIBLE_DEVICES-unset}]\"",
                          two_visible);
  EXPECT_EQ(run.exit_code, 0) << run.all();
  EXPECT_NE(run.out.find("0: [1,3][][unset]"), std::string::npos) << run.all();
  EXPECT_NE(run.out.find("1: [1,3][][unset]"), std::string::npos) << run.all();
}

TEST_F(AgentPlatformTest, UserEnvironmentSurvivesAndEnvWins) {
  ProcessOptions options = Options();
  options.env["NCCL_IB_GID_INDEX"] = "7";
  options.env["NCCL_DEBUG"] = "WARN";
  ProcessResult result = DryRun({"--env", "NCCL_DEBUG=TRACE", "--env", "CUDA_DEVICE_MAX_CONNECTIONS=8"}, options);
  EXPECT_EQ(result.exit_code, 0) << result.all();
  EXPECT_TRUE(PlanHas(result.out, "NCCL_IB_GID_INDEX=7", "user environment")) << result.out;
  EXPECT_TRUE(PlanHas(result.out, "NCCL_DEBUG=TRACE", "flag --env")) << result.out;
  EXPECT_TRUE(PlanHas(result.out, "CUDA_DEVICE_MAX_CONNECTIONS=8", "flag --env")) << result.out;
}

TEST_F(AgentPlatformTest, NamedProfilesAddTheirSettingsAndImpossibleOnesExitThree) {
  ProcessResult prod = DryRun({"--profile", "vccl-prod"}, Options());
  EXPECT_EQ(prod.exit_code, 0) << prod.all();
  EXPECT_NE(prod.out.find(" > profiles/named/vccl-prod.env\n"), std::string::npos) << prod.out;
  EXPECT_TRUE(PlanHas(prod.out, "NCCL_ENABLE_FAULT_TOLERANCE=1", "profiles/named/vccl-prod.env:7")) << prod.out;
  EXPECT_TRUE(PlanHas(prod.out, "NCCL_IB_TIMEOUT=22", "profiles/named/vccl-prod.env:11")) << prod.out;

  ProcessResult both = DryRun({"--profile", "vccl-prod,vccl-sm-free"}, Options());
  EXPECT_EQ(both.exit_code, 3) << both.all();
  EXPECT_NE(both.err.find("cannot be combined"), std::string::npos) << both.err;

  ProcessResult telemetry = DryRun({"--profile", "vccl-sm-free", "--env", "NCCL_TELEMETRY_ENABLE=1"}, Options());
  EXPECT_EQ(telemetry.exit_code, 3) << telemetry.all();

  ProcessResult unknown = DryRun({"--profile", "vccl-prd"}, Options());
  EXPECT_EQ(unknown.exit_code, 3) << unknown.all();
  EXPECT_NE(unknown.err.find("unknown profile 'vccl-prd'"), std::string::npos) << unknown.err;

  // Also without --dry-run: nothing starts.
  ProcessResult real = Run({"--profile", "vccl-prod,vccl-sm-free"}, "touch " + dir_.path() + "/ran", Options());
  EXPECT_EQ(real.exit_code, 3) << real.all();
  EXPECT_FALSE(PathExists(dir_.path() + "/ran"));
}

TEST_F(AgentPlatformTest, WorkersGetThePlannedVariables) {
  ProcessOptions options = Options();
  options.env["NCCL_IB_GID_INDEX"] = "7";
  options.env["NCCL_DEBUG"] = "WARN";
  ProcessResult result =
      Run({"--nproc-per-node", "2", "--env", "NCCL_DEBUG=TRACE", "--profile", "vccl-prod"},
          "echo \"$NCCL_SOCKET_IFNAME $GLOO_SOCKET_IFNAME $CUDA_DEVICE_MAX_CONNECTIONS $NCCL_IB_GID_INDEX "
          "$NCCL_DEBUG $NCCL_ENABLE_FAULT_TOLERANCE\"",
          options);
  EXPECT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("0: lo lo 1 7 TRACE 1\n"), std::string::npos) << result.all();
  EXPECT_NE(result.out.find("1: lo lo 1 7 TRACE 1\n"), std::string::npos) << result.all();
}

// A two-node host whose NUMA node 0 is CPU 0 and node 1 is CPU 1, without GPUs:
// ranks go round-robin over the nodes, so local rank 0 runs on CPU 0 and 1 on CPU 1.
std::string WriteTwoNodeTree(const TempDir& dir) {
  dir.Write("tree/sys/devices/system/node/node0/cpulist", "0\n");
  dir.Write("tree/sys/devices/system/node/node1/cpulist", "1\n");
  dir.Write("tree/proc/self/status", "Name:\tprimus-cli\nCpus_allowed_list:\t0-1\n");
  dir.Write("tree/proc/cpuinfo", "processor\t: 0\nphysical id\t: 0\ncore id\t: 0\n\n"
                                 "processor\t: 1\nphysical id\t: 1\ncore id\t: 0\n\n");
  dir.Write("tree/etc/os-release", "PRETTY_NAME=\"fixture\"\n");
  return dir.path() + "/tree";
}

bool MayRunOnCpus0And1() {
  cpu_set_t allowed;
  return sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_ISSET(0, &allowed) && CPU_ISSET(1, &allowed);
}

TEST_F(AgentPlatformTest, NumaBindBindsEachWorkerForReal) {
  if (!MayRunOnCpus0And1()) GTEST_SKIP() << "this machine does not let us run on CPUs 0 and 1";
  std::string tree = WriteTwoNodeTree(dir_);
  std::string script = "grep Cpus_allowed_list: /proc/self/status; echo \"omp=$OMP_NUM_THREADS\"";

  ProcessResult dry = DryRun({"--nproc-per-node", "2", "--numa-bind"}, OnTree(tree));
  EXPECT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("  local rank 0: CPUs 0, OMP_NUM_THREADS=1\n  local rank 1: CPUs 1, OMP_NUM_THREADS=1\n"),
            std::string::npos)
      << dry.out;

  ProcessResult bound = Run({"--nproc-per-node", "2", "--numa-bind"}, script, OnTree(tree));
  EXPECT_EQ(bound.exit_code, 0) << bound.all();
  EXPECT_NE(bound.out.find("0: Cpus_allowed_list:\t0\n"), std::string::npos) << bound.all();
  EXPECT_NE(bound.out.find("1: Cpus_allowed_list:\t1\n"), std::string::npos) << bound.all();
  EXPECT_NE(bound.out.find("0: omp=1\n"), std::string::npos) << bound.all();

  // The user's OMP_NUM_THREADS is kept; the binding still applies.
  ProcessOptions user_omp = OnTree(tree);
  user_omp.env["OMP_NUM_THREADS"] = "3";
  ProcessResult kept = Run({"--nproc-per-node", "2", "--numa-bind"}, script, user_omp);
  EXPECT_EQ(kept.exit_code, 0) << kept.all();
  EXPECT_NE(kept.out.find("1: Cpus_allowed_list:\t1\n"), std::string::npos) << kept.all();
  EXPECT_NE(kept.out.find("1: omp=3\n"), std::string::npos) << kept.all();

  // Without --numa-bind nobody is bound.
  ProcessResult unbound = Run({"--nproc-per-node", "2"}, script, OnTree(tree));
  EXPECT_EQ(unbound.exit_code, 0) << unbound.all();
  EXPECT_NE(unbound.out.find("1: Cpus_allowed_list:\t0-1\n"), std::string::npos) << unbound.all();
}

TEST_F(AgentPlatformTest, NumaBindWithoutNumaInformationBindsNobody) {
  // No sys/devices/system/node at all: no rank has a known CPU list.
  dir_.Write("bare/proc/self/status", "Cpus_allowed_list:\t0-1\n");
  dir_.Write("bare/sys/.keep", "");
  dir_.Write("bare/etc/.keep", "");
  ProcessResult result = Run({"--nproc-per-node", "2", "--numa-bind"}, "grep Cpus_allowed_list: /proc/self/status",
                             OnTree(dir_.path() + "/bare"));
  EXPECT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.err.find("--numa-bind: no NUMA CPU list is known for local ranks 0, 1: not bound"),
            std::string::npos)
      << result.err;
  if (MayRunOnCpus0And1()) {
    EXPECT_NE(result.out.find("1: Cpus_allowed_list:\t0-1\n"), std::string::npos) << result.all();
  }
}

}  // namespace
}  // namespace primus
